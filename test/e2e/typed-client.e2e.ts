import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { createSalvoClient } from "../../src/client";

const { url, apiKey } = inject("salvo");
const root = join(import.meta.dirname, "..", "..");

describe("typed client", () => {
  it("talks to a running Salvo with typed paths, bodies and answers", async () => {
    const salvo = createSalvoClient({ baseUrl: url, apiKey });

    const account = await salvo.GET("/api/v1/account");
    expect(account.response.status).toBe(200);
    expect(account.data?.email).toBe("demo@salvo.local");

    const saved = await salvo.POST("/api/v1/client/save", { body: { name: "Typed Co", email: "typed@example.com" } });
    expect(saved.data).toMatchObject({ ok: true, name: "Typed Co", email: "typed@example.com" });
    const clientId = saved.data?.id ?? 0;

    const created = await salvo.POST("/api/v1/client/api-key", { body: { clientId, keyName: "typed" } });
    expect(created.data?.data.api_key).toMatch(/^slv_cli_/);

    const listed = await salvo.GET("/api/v1/client/api-key", { params: { query: { clientId } } });
    expect(listed.data?.data.map((key) => key.key_name)).toEqual(["typed"]);
  });

  it("surfaces the contract's error bodies as typed errors", async () => {
    const salvo = createSalvoClient({ baseUrl: url, apiKey });
    const refused = await salvo.POST("/api/v1/client/api-key", { body: { clientId: 999_999, keyName: "x" } });
    expect(refused.response.status).toBe(400);
    expect(refused.error).toEqual({ error: "Client not found" });

    const stranger = createSalvoClient({ baseUrl: url, apiKey: "slv_acct_not-a-key" });
    const denied = await stranger.GET("/api/v1/account");
    expect(denied.response.status).toBe(401);
    expect(denied.error).toEqual({ message: "Invalid API Key" });
  });

  it("is shown in the README exactly as examples/typed-client.ts, which CI type-checks", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const example = readFileSync(join(root, "examples", "typed-client.ts"), "utf8");
    expect(readme).toContain("```ts\n" + example + "```");
  });
});
