import { describe, expect, it } from "vitest";
import { chooseVariant, getsFollowUps, sendsStep, variantWeights } from "../../src/sequences/variants";

const N = 10_000;

function shares(weights: number[], step: number): number[] {
  const counts = weights.map(() => 0);
  for (let id = 1; id <= N; id++) counts[chooseVariant(weights, id, step)]! += 1;
  return counts.map((c) => (c / N) * 100);
}

describe("variantWeights", () => {
  it("splits equally when no percentage is given", () => {
    expect(variantWeights([undefined, null, undefined])).toEqual({ ok: true, weights: [1, 1, 1] });
  });

  it("takes percentages as weights, 0 included", () => {
    expect(variantWeights([33, 33, 33])).toEqual({ ok: true, weights: [33, 33, 33] });
    expect(variantWeights([0, 70, 30])).toEqual({ ok: true, weights: [0, 70, 30] });
  });

  it("shares what is left of 100 among the variants left out", () => {
    expect(variantWeights([50, null, undefined])).toEqual({ ok: true, weights: [50, 25, 25] });
    expect(variantWeights([100, null])).toEqual({ ok: true, weights: [100, 0] });
    expect(variantWeights([0, null])).toEqual({ ok: true, weights: [0, 100] });
  });

  it("refuses all zero, no variants, and values outside 0–100", () => {
    expect(variantWeights([0, 0])).toEqual({ ok: false, message: "At least one variant needs a variant_distribution_percentage above 0" });
    expect(variantWeights([100, 0, null]).ok).toBe(true);
    expect(variantWeights([60, 60, null])).toEqual({ ok: true, weights: [60, 60, 0] });
    expect(variantWeights([]).ok).toBe(false);
    expect(variantWeights([50, 101])).toEqual({ ok: false, message: "Variant 2: variant_distribution_percentage must be between 0 and 100" });
    expect(variantWeights([-1]).ok).toBe(false);
    expect(variantWeights([Number.NaN]).ok).toBe(false);
  });
});

describe("chooseVariant", () => {
  // Hash fractions (independent Python): variant:1:1 = 0.4655, variant:2:1 = 0.5923,
  // variant:3:1 = 0.0397, variant:1:2 = 0.5739, variant:4:1 = 0.2055.
  it("maps the record's hash point onto the weight slices", () => {
    expect([1, 2, 3].map((id) => chooseVariant([50, 50], id, 1))).toEqual([0, 1, 0]);
    expect(chooseVariant([1, 1, 1], 1, 2)).toBe(1);
    expect(chooseVariant([1, 1, 1], 4, 1)).toBe(0);
    expect(chooseVariant([10, 90], 3, 1)).toBe(0);
    expect(chooseVariant([3, 97], 3, 1)).toBe(1);
  });

  it("skips a variant of weight 0", () => {
    expect(chooseVariant([0, 50, 50], 3, 1)).toBe(1);
    for (let id = 1; id <= 1000; id++) expect(chooseVariant([0, 1, 0], id, 2)).toBe(1);
  });

  it("never switches for the same record and step", () => {
    const first = chooseVariant([20, 30, 50], "98765", 4);
    for (let i = 0; i < 20; i++) expect(chooseVariant([20, 30, 50], 98765, 4)).toBe(first);
  });

  it("over 10,000 records lands within 2 points of the weights", () => {
    const split = shares([50, 30, 20], 1);
    [50, 30, 20].forEach((w, i) => expect(Math.abs(split[i]! - w)).toBeLessThan(2));
    const equal = shares([33, 33, 33], 2);
    equal.forEach((s) => expect(Math.abs(s - 100 / 3)).toBeLessThan(2));
    const uneven = shares([5, 0, 95], 3);
    expect(uneven[1]).toBe(0);
    expect(Math.abs(uneven[0]! - 5)).toBeLessThan(1);
  });
});

describe("follow-up percentage", () => {
  // follow-up:<id> fractions x 100 (independent Python): 1 -> 54.86, 2 -> 30.86, 3 -> 59.59, 4 -> 78.02, 5 -> 8.78.
  it("admits a record when its hash bucket is under the percentage", () => {
    expect([1, 2, 3, 4, 5].map((id) => getsFollowUps(id, 50))).toEqual([false, true, false, false, true]);
    expect([1, 2, 3, 4, 5].map((id) => getsFollowUps(id, 55))).toEqual([true, true, false, false, true]);
  });

  it("100 admits every record and 0 none", () => {
    for (let id = 1; id <= 2000; id++) {
      expect(getsFollowUps(id, 100)).toBe(true);
      expect(getsFollowUps(id, 0)).toBe(false);
    }
  });

  it("admits about the share asked for, and raising it only adds records", () => {
    let at30 = 0;
    for (let id = 1; id <= N; id++) {
      if (getsFollowUps(id, 30)) {
        at30 += 1;
        expect(getsFollowUps(id, 60)).toBe(true);
      }
    }
    expect(Math.abs((at30 / N) * 100 - 30)).toBeLessThan(2);
  });

  it("always sends step 1; later steps follow the share", () => {
    expect(sendsStep(1, 1, 0)).toBe(true);
    expect([sendsStep(1, 2, 50), sendsStep(2, 2, 50), sendsStep(2, 5, 50)]).toEqual([false, true, true]);
  });
});
