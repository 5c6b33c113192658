import { describe, expect, it } from "vitest";
import { END, renderEndpointIndex, START } from "../scripts/lib/endpoint-index.mjs";
import { hostOf, renderMovingGuide } from "../scripts/lib/moving-guide.mjs";
import { callJson } from "./helpers";

const docs = import.meta.glob<string>(["../docs/MOVING*.md", "../README.md"], { query: "?raw", import: "default", eager: true });

describe("the move guide (docs/MOVING.md)", () => {
  it("is what `npm run docs:moving` writes from the served document and the intro (regenerate it after route changes)", async () => {
    const { body: document } = await callJson<{ paths: Record<string, Record<string, Record<string, unknown>>> }>("/openapi.json");
    const committed = docs["../docs/MOVING.md"];
    expect(committed, "docs/MOVING.md is committed").toBeDefined();
    expect(renderMovingGuide(document, docs["../docs/MOVING.intro.md"]!)).toBe(committed);
  });

  it("lists every operation with its host", async () => {
    const { body: document } = await callJson<{ paths: Record<string, Record<string, Record<string, unknown>>> }>("/openapi.json");
    const guide = docs["../docs/MOVING.md"]!;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect(guide, `${method} ${path}`).toContain(`| ${method.toUpperCase()} | \`${path}\` | ${hostOf(path, operation)} |`);
      }
    }
    expect(hostOf("/api/v1/spam-test/manual")).toBe("delivery");
    expect(hostOf("/api/v1/search-email-leads/search-filters/saved-searches")).toBe("prospect");
    expect(hostOf("/api/v1/campaigns")).toBe("server");
    expect(hostOf("/api/v1/rate-limit", document.paths["/api/v1/rate-limit"]!.get)).toBe("Salvo only");
    expect(guide).toContain("https://smartdelivery.smartlead.ai/api/v1");
  });

  it("writes README's endpoint index from the same document: every operation, with its summary", async () => {
    const { body: document } = await callJson<{ paths: Record<string, Record<string, { tags?: string[]; summary?: string }>> }>("/openapi.json");
    const readme = docs["../README.md"]!;
    const committed = readme.slice(readme.indexOf(START), readme.indexOf(END) + END.length);
    expect(renderEndpointIndex(document)).toBe(committed);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const method of Object.keys(methods)) expect(committed, `${method} ${path}`).toContain(`| ${method.toUpperCase()} | \`${path}\` |`);
    }
  });
});
