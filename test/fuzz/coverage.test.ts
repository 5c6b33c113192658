/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { featureOf } from "../features";
import { operationsOf, servedDocument } from "./suite";

/** The feature files beside this one (not loaded: only their names). */
const FILES = Object.keys(import.meta.glob("./*.test.ts"));

describe("fuzz coverage (from the OpenAPI document)", () => {
  it("fuzzes every operation in its feature's file", async () => {
    const operations = operationsOf(await servedDocument());
    expect(operations.length).toBeGreaterThan(10);
    const unwalked = operations
      .filter(({ path }) => !FILES.includes(`./${featureOf(path)}.test.ts`))
      .map(({ path, method }) => `${method} ${path} (feature ${featureOf(path)})`);
    expect(unwalked, "operations no fuzz file walks: give each a feature in test/features.ts with a file here").toEqual([]);
  });
});
