/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { featureOf } from "../features";
import { CALLERS, planAll, servedDocument, variantsOf } from "./suite";

/** The feature files beside this one (not loaded: only their names). */
const FILES = Object.keys(import.meta.glob("./*.test.ts"));

describe("tenancy matrix coverage (from the OpenAPI document)", () => {
  it("builds a request for every id-taking operation and walks each in its feature's file", async () => {
    const { plans, unbuildable } = planAll(await servedDocument());
    expect(unbuildable, `operations with ids the matrix cannot build a request for: ${unbuildable.join("; ")}`).toEqual([]);
    expect(plans.length).toBeGreaterThan(40);
    expect(plans.reduce((attempts, plan) => attempts + variantsOf(plan).length * CALLERS, 0)).toBeGreaterThan(100);
    const unwalked = plans.filter((plan) => !FILES.includes(`./${featureOf(plan.path)}.test.ts`)).map((plan) => `${plan.label} (feature ${featureOf(plan.path)})`);
    expect(unwalked, "operations no matrix file walks: give each a feature in test/features.ts with a file here").toEqual([]);
  });
});
