import { describe, expect, it } from "vitest";
import { loggedPath } from "../../src/platform/logging";

describe("loggedPath", () => {
  it("keeps API paths and hides the tokens of tracking and unsubscribe links", () => {
    expect(loggedPath("/api/v1/campaigns/12/leads")).toBe("/api/v1/campaigns/12/leads");
    expect(loggedPath("/t/o/abc.def.gif")).toBe("/t/o/:token");
    expect(loggedPath("/t/c/abc.def")).toBe("/t/c/:token");
    expect(loggedPath("/u/abc.def")).toBe("/u/:token");
    expect(loggedPath("/users/abc")).toBe("/users/abc");
  });
});
