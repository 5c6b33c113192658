import { describe, expect, it } from "vitest";
import { adjustedTotal, countByProvider, emptyCounts, sumCounts } from "../../src/deliverability/placement-report";

describe("placement report", () => {
  it("counts results per provider and folder, total including pending", () => {
    const counts = countByProvider([
      { providerId: "gmail", folder: "inbox", n: 3 },
      { providerId: "gmail", folder: "spam", n: 1 },
      { providerId: "outlook", folder: "tab", n: 2 },
      { providerId: "gmail", folder: "pending", n: 4 },
      { providerId: "gmail", folder: "inbox", n: 2 },
      { providerId: "outlook", folder: "not_received", n: 5 },
    ]);
    expect([...counts.keys()]).toEqual(["gmail", "outlook"]);
    expect(counts.get("gmail")).toEqual({ inbox_count: 5, tab_count: 0, spam_count: 1, not_received_count: 0, pending_count: 4, total_count: 10 });
    expect(counts.get("outlook")).toEqual({ inbox_count: 0, tab_count: 2, spam_count: 0, not_received_count: 5, pending_count: 0, total_count: 7 });
    expect(countByProvider([]).size).toBe(0);
  });

  it("leaves pending results out of the adjusted total", () => {
    expect(adjustedTotal({ ...emptyCounts(), inbox_count: 5, spam_count: 1, pending_count: 4, total_count: 10 })).toBe(6);
    expect(adjustedTotal(emptyCounts())).toBe(0);
  });

  it("adds providers' counts field by field, and gives zeros for none", () => {
    const a = { inbox_count: 1, tab_count: 2, spam_count: 3, not_received_count: 4, pending_count: 5, total_count: 15 };
    const b = { inbox_count: 10, tab_count: 20, spam_count: 30, not_received_count: 40, pending_count: 50, total_count: 150 };
    expect(sumCounts([a, b])).toEqual({ inbox_count: 11, tab_count: 22, spam_count: 33, not_received_count: 44, pending_count: 55, total_count: 165 });
    expect(sumCounts(new Map([["x", a]]).values())).toEqual(a);
    expect(sumCounts([])).toEqual(emptyCounts());
    expect(a.inbox_count).toBe(1);
  });

  it("hands out a fresh zero record each time", () => {
    const first = emptyCounts();
    first.inbox_count = 9;
    expect(emptyCounts().inbox_count).toBe(0);
  });
});
