import { stableFraction } from "./hash";

/**
 * A/B variants and the follow-up share (CONTRACT section 11). Both are decided per record from a
 * stable hash, never at random: an alarm that retries a send, or a second isolate that picks the same
 * record, must choose the same variant and the same yes/no, or a lead could get two versions of a step.
 */

type WeightsResult = { ok: true; weights: number[] } | { ok: false; message: string };

/**
 * The weights to choose by, from the variants' `variant_distribution_percentage` in order.
 * Percentages are weights (33 + 33 + 33 works, as BC sends); 0 disables a variant; none given = an
 * equal split. When only some are given, the ones left out share what is left of 100 equally (none
 * if the given ones reach 100): the reading a person who typed "A 50" and left B and C blank means.
 * All zero (or no variants) is refused, as is a value outside 0–100.
 */
export function variantWeights(percentages: readonly (number | null | undefined)[]): WeightsResult {
  if (percentages.length === 0) return { ok: false, message: "A step with variants needs at least one variant" };
  for (const [i, p] of percentages.entries()) {
    if (p != null && !(Number.isFinite(p) && p >= 0 && p <= 100)) {
      return { ok: false, message: `Variant ${i + 1}: variant_distribution_percentage must be between 0 and 100` };
    }
  }
  const given = percentages.filter((p): p is number => p != null);
  let weights: number[];
  if (given.length === 0) weights = percentages.map(() => 1);
  else {
    const missing = percentages.length - given.length;
    const share = missing === 0 ? 0 : Math.max(0, 100 - given.reduce((a, b) => a + b, 0)) / missing;
    weights = percentages.map((p) => p ?? share);
  }
  if (weights.every((w) => w === 0)) {
    return { ok: false, message: "At least one variant needs a variant_distribution_percentage above 0" };
  }
  return { ok: true, weights };
}

/**
 * The variant index a record gets for a step: the hash of (record id, step) as a point in [0, total
 * weight), and the variant whose slice holds it. A variant of weight 0 has an empty slice.
 * `weights` must come from `variantWeights` (at least one above 0).
 */
export function chooseVariant(weights: readonly number[], recordId: number | string, step: number): number {
  const total = weights.reduce((a, b) => a + b, 0);
  const point = stableFraction(`variant:${recordId}:${step}`) * total;
  let upTo = 0;
  let last = -1;
  for (const [i, w] of weights.entries()) {
    // Skipped so that a disabled variant can never be `last` below.
    if (w <= 0) continue;
    upTo += w;
    last = i;
    if (point < upTo) return i;
  }
  // Floating-point sums can leave the point a hair above the last bound; it belongs to the last slice.
  return last;
}

/**
 * Whether a record is among the `follow_up_percentage` share that gets steps 2 and later. The hash
 * depends on the record only, so the answer is the same for every step, and raising the percentage
 * only ever adds records (a record in at 30 is still in at 60).
 */
export function getsFollowUps(recordId: number | string, followUpPercentage: number): boolean {
  return stableFraction(`follow-up:${recordId}`) * 100 < followUpPercentage;
}

/** Whether a record is sent a given step (1-based): step 1 always, later ones per the follow-up share. */
export function sendsStep(recordId: number | string, step: number, followUpPercentage: number): boolean {
  return step <= 1 || getsFollowUps(recordId, followUpPercentage);
}
