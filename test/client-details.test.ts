import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount, fileEnv } from "./helpers";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("a client by id (CONTRACT 21.4)", () => {
  it("answers the hosted shape, with a stable UUID, and adds each part only when asked", async () => {
    const account = await provisionAccount();
    const id = await createClient(account.apiKey, "Acme", "ops@acme.example");
    const plain = await callJson<{ ok: boolean; data: Record<string, unknown> }>(`/api/v1/client/${id}`, { apiKey: account.apiKey });
    expect(plain.status).toBe(200);
    expect(plain.body).toEqual({
      ok: true,
      data: {
        id,
        uuid: expect.stringMatching(UUID),
        name: "Acme",
        email: "ops@acme.example",
        logo: null,
        user_id: account.id,
        created_at: expect.any(String),
        logo_url: null,
        is_credit_assigned: false,
        mobile_device_id: null,
        ga_view_access: false,
        client_preferences: {},
      },
    });
    const again = await callJson<{ data: { uuid: string } }>(`/api/v1/client/${id}`, { apiKey: account.apiKey });
    expect(again.body.data.uuid).toBe(plain.body.data.uuid);
    const other = await createClient(account.apiKey, "Other", "other@acme.example");
    const otherRead = await callJson<{ data: { uuid: string } }>(`/api/v1/client/${other}`, { apiKey: account.apiKey });
    expect(otherRead.body.data.uuid).not.toBe(plain.body.data.uuid);

    await callJson("/api/v1/email-accounts/oauth/google/app", { method: "PUT", apiKey: account.apiKey, body: { oauth_client_id: "acct-app.apps.googleusercontent.com", oauth_client_secret: "s" } });
    await callJson(`/api/v1/client/${id}/code-integrations`, { method: "POST", apiKey: account.apiKey, body: { snippet_name: "GA", snippet_code: "<script>1</script>" } });
    const full = await callJson<{ data: Record<string, unknown> }>(
      `/api/v1/client/${id}?includePermissions=true&includeCredits=true&includeCodeIntegrations=true&includeWhitelabel=true`,
      { apiKey: account.apiKey },
    );
    expect(full.body.data).toMatchObject({
      client_permissions: [{ permission: ["full_access"], retricted_category: [] }],
      user_client_credit: null,
      client_code_integrations: [{ id: expect.any(Number), snippet_name: "GA", snippet_code: "<script>1</script>" }],
      user: {
        gpt_api_info: null,
        whitelabel_details: null,
        display_whitelabel_credentials: true,
        wl_google_client_id: "acct-app.apps.googleusercontent.com",
        wl_microsoft_client_id: null,
      },
    });
  });

  it("gives a client written without one (raw SQL, as before the migration) a UUID on its first read, then keeps it", async () => {
    const account = await provisionAccount();
    const row = await fileEnv().DB.prepare("INSERT INTO clients (account_id, name, email) VALUES (?, 'Raw', 'raw@x.example') RETURNING id").bind(account.id).first<{ id: number }>();
    const first = await callJson<{ data: { uuid: string } }>(`/api/v1/client/${row!.id}`, { apiKey: account.apiKey });
    expect(first.body.data.uuid).toMatch(UUID);
    const second = await callJson<{ data: { uuid: string } }>(`/api/v1/client/${row!.id}`, { apiKey: account.apiKey });
    expect(second.body.data.uuid).toBe(first.body.data.uuid);
  });

  it("keeps tenants apart and is closed to client keys", async () => {
    const owner = await provisionAccount();
    const intruder = await provisionAccount();
    const id = await createClient(owner.apiKey);
    const foreign = await callJson(`/api/v1/client/${id}`, { apiKey: intruder.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ ok: false, error: "Client not found or does not belong to the user", message: "Client not found or does not belong to the user" });
    expect((await callJson(`/api/v1/client/999999999`, { apiKey: owner.apiKey })).status).toBe(404);
    const key = await createClientKey(owner.apiKey, id);
    const byClientKey = await callJson(`/api/v1/client/${id}`, { apiKey: key.api_key });
    expect(byClientKey.status).toBe(401);
    expect((await callJson(`/api/v1/client/${id}/code-integrations`, { method: "POST", apiKey: key.api_key, body: { snippet_name: "x", snippet_code: "y" } })).status).toBe(401);
    expect((await callJson(`/api/v1/client/${id}/code-integrations`, { method: "POST", apiKey: intruder.apiKey, body: { snippet_name: "x", snippet_code: "y" } })).status).toBe(404);
  });

  it("answers bad input with 422", async () => {
    const account = await provisionAccount();
    expect((await callJson("/api/v1/client/abc", { apiKey: account.apiKey })).status).toBe(422);
    expect((await callJson("/api/v1/client/0", { apiKey: account.apiKey })).status).toBe(422);
    // The client keys' literal path is not a client id.
    expect((await callJson("/api/v1/client/api-key", { apiKey: account.apiKey })).status).toBe(200);
  });
});

describe("a client's code integrations (CONTRACT 21.4)", () => {
  it("stores, changes and deletes a snippet, which the read lists", async () => {
    const account = await provisionAccount();
    const id = await createClient(account.apiKey);
    const created = await callJson<{ data: { id: number } }>(`/api/v1/client/${id}/code-integrations`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { snippet_name: "Chat", snippet_code: "<script>chat()</script>" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true, ok: true, data: { id: expect.any(Number) } });
    const snippet = created.body.data.id;
    const patched = await callJson(`/api/v1/client/${id}/code-integrations/${snippet}`, { method: "PATCH", apiKey: account.apiKey, body: { snippet_code: "<script>v2()</script>" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ success: true, ok: true, data: { id: snippet } });
    const read = await callJson<{ data: { client_code_integrations: unknown[] } }>(`/api/v1/client/${id}?includeCodeIntegrations=true`, { apiKey: account.apiKey });
    expect(read.body.data.client_code_integrations).toEqual([{ id: snippet, snippet_name: "Chat", snippet_code: "<script>v2()</script>" }]);
    const removed = await callJson(`/api/v1/client/${id}/code-integrations/${snippet}`, { method: "DELETE", apiKey: account.apiKey });
    expect(removed.status).toBe(200);
    const after = await callJson<{ data: { client_code_integrations: unknown[] } }>(`/api/v1/client/${id}?includeCodeIntegrations=true`, { apiKey: account.apiKey });
    expect(after.body.data.client_code_integrations).toEqual([]);
    expect((await callJson(`/api/v1/client/${id}/code-integrations/${snippet}`, { method: "DELETE", apiKey: account.apiKey })).status).toBe(404);
  });

  it("refuses another client's snippet through this client's path, and bad bodies", async () => {
    const account = await provisionAccount();
    const first = await createClient(account.apiKey, "A", "a@x.example");
    const second = await createClient(account.apiKey, "B", "b@x.example");
    const created = await callJson<{ data: { id: number } }>(`/api/v1/client/${first}/code-integrations`, { method: "POST", apiKey: account.apiKey, body: { snippet_name: "A", snippet_code: "a" } });
    const cross = await callJson(`/api/v1/client/${second}/code-integrations/${created.body.data.id}`, { method: "PATCH", apiKey: account.apiKey, body: { snippet_name: "hijack" } });
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ ok: false, error: "Code integration not found", message: "Code integration not found" });
    const empty = await callJson(`/api/v1/client/${first}/code-integrations/${created.body.data.id}`, { method: "PATCH", apiKey: account.apiKey, body: {} });
    expect(empty.status).toBe(422);
    const tooLong = await callJson(`/api/v1/client/${first}/code-integrations`, { method: "POST", apiKey: account.apiKey, body: { snippet_name: "x".repeat(256), snippet_code: "" } });
    expect(tooLong.status).toBe(422);
    expect((tooLong.body as { details: { path: string }[] }).details.map((d) => d.path).sort()).toEqual(["snippet_code", "snippet_name"]);
  });
});
