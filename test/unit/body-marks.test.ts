import { describe, expect, it } from "vitest";
import { ShapeCache } from "../../src/engine/body-marks";

describe("the shape cache", () => {
  it("notes a template the first time, asks for its shape the second, and keeps it", () => {
    const cache = new ShapeCache<{ pieces: string[] }>();
    expect(cache.find("a")).toBeNull();
    expect(cache.find("a")).toBe("build");
    cache.keep("a", { pieces: ["shape of a"] });
    expect(cache.find("a")).toEqual({ pieces: ["shape of a"] });
    cache.keep("b", null);
    expect(cache.find("b"), "a template without a shape stays without").toBeNull();
  });

  it("lets the oldest go past 256 templates, or past two million characters of keys and shapes", () => {
    const cache = new ShapeCache<{ pieces: string[] }>();
    for (let i = 0; i < 300; i += 1) cache.find(`t${i}`);
    expect(cache.find("t299")).toBe("build");
    expect(cache.find("t0"), "the oldest went").toBeNull();

    const big = new ShapeCache<{ pieces: string[] }>();
    const body = (i: number) => `${i}:${"x".repeat(300_000)}`;
    for (let i = 0; i < 5; i += 1) {
      big.find(body(i));
      big.find(body(i));
      big.keep(body(i), { pieces: ["y".repeat(300_000)] });
    }
    expect(big.find(body(4)), "the newest is kept").toEqual({ pieces: ["y".repeat(300_000)] });
    expect(big.find(body(2))).toEqual({ pieces: ["y".repeat(300_000)] });
    expect(big.find(body(1)), "600,000 characters each: the first two went when the fourth and fifth came").toBeNull();
  });
});
