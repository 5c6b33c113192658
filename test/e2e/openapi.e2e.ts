import { Validator } from "@seriousme/openapi-schema-validator";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";

const { url } = inject("salvo");

async function servedDocument() {
  const response = await fetch(`${url}/openapi.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe("OpenAPI document as served", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(await servedDocument());
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is the document the typed client was generated from (run `npm run client:generate` after API changes)", async () => {
    const document = await servedDocument();
    delete document.servers;
    const snapshot = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "src", "client", "openapi.snapshot.json"), "utf8"));
    expect(document).toEqual(snapshot);
  });
});
