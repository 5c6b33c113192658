import { describe, expect, it } from "vitest";
import { call, callJson, createClient, provisionAccount } from "./helpers";
import { createCampaign } from "./campaigns/fixtures";
import { manualBody } from "./deliverability/fixtures";

type Provider = { provider_id: string; provider_num: number };

async function providers(apiKey: string): Promise<Provider[]> {
  const { body } = await callJson<{ groups: { providers: Provider[] }[] }[]>("/api/v1/spam-test/seed/providers", { apiKey });
  return body.flatMap((region) => region.groups.flatMap((group) => group.providers));
}

describe("C2: numeric provider ids", () => {
  it("numbers every provider 1-25 in the catalogue migration's order", async () => {
    const account = await provisionAccount();
    const byId = Object.fromEntries((await providers(account.apiKey)).map((p) => [p.provider_id, p.provider_num]));
    expect(Object.values(byId).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect([byId.gmail, byId["google-workspace"], byId.outlook, byId.office365, byId.uol]).toEqual([1, 2, 3, 4, 25]);
  });

  it("accepts the string id, the integer and its decimal string, mixed; answers string ids", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const create = (overrides: Record<string, unknown>) =>
      callJson<Record<string, unknown>>("/api/v1/spam-test/manual", { method: "POST", apiKey: account.apiKey, body: manualBody(campaign, overrides) });
    const mixed = await create({ provider_ids: [1, "3", "yahoo"] });
    expect(mixed.status).toBe(200);
    expect(mixed.body.provider_id).toBe("gmail,outlook,yahoo");
    expect((await create({ provider_ids: undefined, provider_id: "1,office365" })).body.provider_id).toBe("gmail,office365");
    expect((await create({ provider_ids: undefined, provider_id: 2 })).body.provider_id).toBe("google-workspace");
    const unknown = await create({ provider_ids: [1, 99] });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ details: [{ path: "provider_ids.1", message: expect.stringMatching(/^Unknown provider 99; valid providers: .*gmail \(1\)/) }] });
  });
});

describe("C3: spam-test schedule from top-level fields", () => {
  const base = (campaign: number) => ({
    ...manualBody(campaign, { provider_ids: ["gmail"] }),
    schedule_start_time: "2026-12-01T10:00:00Z",
    test_end_date: "2026-12-31T00:00:00Z",
  });

  it("builds scheduler_cron_value from tz, days and startHour (or starHour), with defaults", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const schedule = (extra: Record<string, unknown>) =>
      callJson<Record<string, unknown>>("/api/v1/spam-test/schedule", { method: "POST", apiKey: account.apiKey, body: { ...base(campaign), ...extra } });
    expect((await schedule({ tz: "UTC", days: [1, 3] })).body).toMatchObject({ scheduler_cron_value: "0 10 * * 1,3" });
    expect((await schedule({ tz: "Asia/Kolkata", days: [7, 1], starHour: "06:50" })).body).toMatchObject({ scheduler_cron_value: "50 6 * * 0,1" });
    expect((await schedule({ tz: "Europe/Paris", startHour: "08:15", endHour: "18:00" })).body).toMatchObject({ scheduler_cron_value: "15 8 * * 0,1,2,3,4,5,6" });
    // No hour anywhere: the start time's wall clock in the zone (10:00Z is 11:00 in Paris in December).
    expect((await schedule({ scheduler_cron_value: { tz: "Europe/Paris", days: [2] } })).body).toMatchObject({ scheduler_cron_value: "0 11 * * 2" });
    expect((await schedule({ scheduler_cron_value: "5 4 * * *", days: [1], startHour: "09:00" })).body).toMatchObject({ scheduler_cron_value: "5 4 * * *" });
  });

  it("says what is missing when nothing usable is given", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body } = await callJson("/api/v1/spam-test/schedule", { method: "POST", apiKey: account.apiKey, body: base(campaign) });
    expect(status).toBe(422);
    expect(body).toMatchObject({ details: [{ path: "scheduler_cron_value", message: "scheduler_cron_value is required (or tz, days and startHour)" }] });
  });
});

describe("C4: testType=auto", () => {
  it("reads auto as automated", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await callJson("/api/v1/spam-test/manual", { method: "POST", apiKey: account.apiKey, body: manualBody(campaign) });
    await callJson("/api/v1/spam-test/schedule", {
      method: "POST",
      apiKey: account.apiKey,
      body: { ...manualBody(campaign), schedule_start_time: "2026-12-01T10:00:00Z", test_end_date: "2026-12-31T00:00:00Z", scheduler_cron_value: "0 9 * * *" },
    });
    const { status, body } = await callJson<{ data: { test_type: string }[] }>("/api/v1/spam-test/report?testType=auto", {
      method: "POST",
      apiKey: account.apiKey,
      body: { limit: 10, offset: 0 },
    });
    expect(status).toBe(200);
    expect(body.data.map((test) => test.test_type)).toEqual(["automated"]);
  });
});

describe("C5: snake_case client-key create", () => {
  it("reads client_id and key_name; camelCase wins when both are sent", async () => {
    const account = await provisionAccount();
    const clientId = await createClient(account.apiKey);
    const create = (body: unknown) => callJson<{ ok: boolean; data: { client_id: number; key_name: string } }>("/api/v1/client/api-key", { method: "POST", apiKey: account.apiKey, body });
    expect(await create({ client_id: clientId, key_name: "k-snake" })).toMatchObject({ status: 200, body: { ok: true, data: { client_id: clientId, key_name: "k-snake" } } });
    expect((await create({ clientId, client_id: 999999, keyName: "camel", key_name: "bad name!" })).body).toMatchObject({ data: { client_id: clientId, key_name: "camel" } });
    expect(await create({ client_id: clientId, key_name: "bad name!" })).toMatchObject({ status: 422, body: { details: [{ path: "keyName" }] } });
    expect(await create({ key_name: "x" })).toMatchObject({ status: 422, body: { details: [{ path: "clientId", message: "Required" }] } });
  });
});

describe("C9: literal segments before parameters; unknown paths answer 404", () => {
  it("answers a route-like word where a route has an id as an unknown path, a malformed id still as 422", async () => {
    const account = await provisionAccount();
    expect(await callJson("/api/v1/campaigns/no-such-route", { apiKey: account.apiKey })).toMatchObject({ status: 404, body: { error: "Not found" } });
    expect(await callJson("/api/v1/campaigns/no_such_route/leads", { apiKey: account.apiKey })).toMatchObject({ status: 404, body: { error: "Not found" } });
    expect((await callJson("/api/v1/campaigns/abc", { apiKey: account.apiKey })).status).toBe(422);
    expect((await callJson("/api/v1/campaigns/12abc", { apiKey: account.apiKey })).status).toBe(422);
  });

  it("never lets a parameter route answer for a literal route of the same shape", async () => {
    const account = await provisionAccount();
    const { body: document } = await callJson<{ paths: Record<string, Record<string, { parameters?: { name: string }[] }>> }>("/openapi.json");
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith("/api/v1/"))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({ method, path, segments: path.split("/"), own: (operation.parameters ?? []).map((p) => p.name) })),
      );
    const isParam = (segment: string) => segment.startsWith("{");
    const shadowing = operations.flatMap((literal) =>
      operations
        .filter(
          (other) =>
            other !== literal &&
            other.method === literal.method &&
            other.segments.length === literal.segments.length &&
            other.segments.every((segment, i) => segment === literal.segments[i] || (isParam(segment) && !isParam(literal.segments[i]!))),
        )
        .map((other) => ({ literal, other })),
    );
    expect(shadowing.length).toBeGreaterThan(0);
    for (const { literal, other } of shadowing) {
      const path = literal.path.replace(/\{[^}]+\}/g, "1");
      const response = await call(`${path}`, { method: literal.method.toUpperCase(), apiKey: account.apiKey, ...(literal.method === "get" ? {} : { body: {} }) });
      const body = (await response.json()) as { error?: string; details?: { path: string }[] };
      const label = `${literal.method} ${literal.path} (beside ${other.path})`;
      expect(response.status === 404 && body.error === "Not found", label).toBe(false);
      // An id the literal route takes itself (e.g. a query parameter of the same name) is its own refusal.
      const params = other.segments
        .filter((segment, i) => isParam(segment) && !isParam(literal.segments[i]!))
        .map((s) => s.slice(1, -1))
        .filter((name) => !literal.own.includes(name));
      expect(body.details?.map((d) => d.path).filter((p) => params.includes(p)) ?? [], label).toEqual([]);
    }
  });
});

describe("a missing field answers Required", () => {
  it("says Required for absent fields, also where a field takes several forms", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { body } = await callJson<{ details: { path: string; message: string }[] }>(`/api/v1/campaigns/${campaign}/events`, {
      method: "POST",
      apiKey: account.apiKey,
      body: {},
    });
    expect(body.details).toEqual([{ path: "events", message: "Required" }]);
    const client = await callJson<{ details: { path: string; message: string }[] }>("/api/v1/client/save", { method: "POST", apiKey: account.apiKey, body: { name: "x" } });
    expect(client.body.details).toEqual([{ path: "email", message: "Required" }]);
    const wrongType = await callJson<{ details: { path: string; message: string }[] }>("/api/v1/client/save", { method: "POST", apiKey: account.apiKey, body: { name: 5, email: "a@b.example" } });
    expect(wrongType.body.details[0]!.message).not.toBe("Required");
  });
});

type Document = { paths: Record<string, Record<string, { operationId: string; requestBody?: { required?: boolean } }>> };

describe("an empty body is no body (issue 23)", () => {
  const JSON_TYPE = { "Content-Type": "application/json" };

  it("answers every optional-body route of the document sent empty with Content-Type: application/json as sent without a body", async () => {
    const account = await provisionAccount();
    const { body: document } = await callJson<Document>("/openapi.json");
    const optional = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.requestBody !== undefined && operation.requestBody.required !== true)
        .map(([method, operation]) => ({ method: method.toUpperCase(), path, id: operation.operationId })),
    );
    // The seven the public clients hit; a new optional body is walked too.
    expect(optional.map((op) => `${op.method} ${op.path}`)).toEqual(
      expect.arrayContaining([
        "POST /api/v1/campaigns/{campaign_id}/retrigger-webhooks",
        "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/resume",
        "POST /api/v1/campaigns/{campaign_id}/duplicate",
        "POST /api/v1/campaigns/{campaign_id}/create-subsequence",
        "POST /api/v1/campaigns/{campaign_id}/message-history-for-leads/{token}",
        "POST /api/v1/email-accounts/reconnect-failed-email-accounts",
        "POST /api/v1/lead-list/{id}/import-csv",
      ]),
    );
    for (const op of optional) {
      const path = op.path.replace(/\{[^}]+\}/g, "999999999");
      const answer = async (options: { rawBody?: string; headers?: Record<string, string> }) => {
        const response = await call(path, { method: op.method, apiKey: account.apiKey, ...options });
        return { status: response.status, body: await response.json() };
      };
      const none = await answer({});
      for (const [rawBody, contentType] of [
        ["", "application/json"],
        ["", "application/json; charset=utf-8"],
        [" \r\n", "application/json"],
      ] as const) {
        expect(await answer({ rawBody, headers: { "Content-Type": contentType } }), `${op.id} with ${JSON.stringify(rawBody)} as ${contentType}`).toEqual(none);
      }
    }
  });

  it("runs the optional-body routes on real resources when the body is empty", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey, { name: "Empty body" });
    const duplicate = await callJson<{ ok: boolean; newCampaignId: number }>(`/api/v1/campaigns/${campaign}/duplicate`, {
      method: "POST",
      apiKey: account.apiKey,
      rawBody: "",
      headers: JSON_TYPE,
    });
    expect(duplicate).toMatchObject({ status: 200, body: { ok: true, newCampaignId: expect.any(Number) } });
    expect(
      await callJson(`/api/v1/campaigns/${campaign}/retrigger-webhooks`, { method: "POST", apiKey: account.apiKey, rawBody: "", headers: JSON_TYPE }),
    ).toMatchObject({ status: 200, body: { ok: true, requeued: 0 } });
    const subsequence = await callJson(`/api/v1/campaigns/${campaign}/create-subsequence`, { method: "POST", apiKey: account.apiKey, rawBody: "", headers: JSON_TYPE });
    expect(subsequence).toMatchObject({ status: 200, body: { ok: true, id: expect.any(Number) } });
  });

  it("answers a required body sent empty as one left out: 422 naming each required field", async () => {
    const account = await provisionAccount();
    const left = await callJson("/api/v1/client/save", { method: "POST", apiKey: account.apiKey });
    const empty = await callJson("/api/v1/client/save", { method: "POST", apiKey: account.apiKey, rawBody: "", headers: JSON_TYPE });
    expect(empty.status).toBe(422);
    expect(empty.body).toEqual(left.body);
    expect(empty.body).toMatchObject({ error: "Validation failed", details: expect.arrayContaining([{ path: "email", message: "Required" }]) });
    // Not JSON at all is still malformed.
    expect(await callJson("/api/v1/client/save", { method: "POST", apiKey: account.apiKey, rawBody: "{", headers: JSON_TYPE })).toMatchObject({
      status: 400,
      body: { error: "Malformed JSON in request body" },
    });
  });
});

describe("CONTRACT 11 and 17 from the public clients (issue 23)", () => {
  const step = { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "<p>Hello</p>" };

  it("serves the singular /campaigns/{id}/sequence as /sequences, each in the document with its own operation", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const saved = await callJson<{ ok: boolean; data: { seq_number: number }[] }>(`/api/v1/campaigns/${campaign}/sequence`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { sequences: [step] },
    });
    expect(saved).toMatchObject({ status: 200, body: { ok: true, data: [{ seq_number: 1, subject: "Hi" }] } });
    const singular = await callJson(`/api/v1/campaigns/${campaign}/sequence`, { apiKey: account.apiKey });
    const plural = await callJson(`/api/v1/campaigns/${campaign}/sequences`, { apiKey: account.apiKey });
    expect(singular.status).toBe(200);
    expect(singular.body).toEqual(plural.body);
    expect(singular.body).toEqual(saved.body.data);
    const stranger = await provisionAccount();
    expect(await callJson(`/api/v1/campaigns/${campaign}/sequence`, { apiKey: stranger.apiKey })).toMatchObject({ status: 404 });

    const { body: document } = await callJson<{ paths: Record<string, Record<string, { operationId?: string; summary?: string; description?: string }>> }>("/openapi.json");
    const one = document.paths["/api/v1/campaigns/{campaign_id}/sequence"]!;
    const many = document.paths["/api/v1/campaigns/{campaign_id}/sequences"]!;
    for (const method of ["get", "post"]) {
      expect(one[method]).toMatchObject({ operationId: expect.any(String), summary: expect.any(String), description: expect.any(String) });
      expect(one[method]!.operationId).not.toBe(many[method]!.operationId);
    }
  });

  it("names the missing field when a body that takes several forms fits none", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const wrongKey = await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey: account.apiKey, body: { sequence: [step] } });
    expect(wrongKey).toMatchObject({ status: 422, body: { error: "Validation failed", details: [{ path: "sequences", message: "Required" }] } });
    // Inside a form that fits, the failing field of that form, not the union's "Invalid input".
    const badId = await callJson<{ details: { path: string; message: string }[] }>(`/api/v1/campaigns/${campaign}/sequences`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { sequences: [{ ...step, id: "abc" }] },
    });
    expect(badId.status).toBe(422);
    expect(badId.body.details).toHaveLength(1);
    expect(badId.body.details[0]!.path).toBe("sequences.0.id");
    expect(badId.body.details[0]!.message).not.toBe("Invalid input");
    const bare = await callJson<{ details: { path: string; message: string }[] }>(`/api/v1/campaigns/${campaign}/sequences`, {
      method: "POST",
      apiKey: account.apiKey,
      body: [{ ...step, seq_number: 0 }],
    });
    expect(bare.body.details).toEqual([{ path: "0.seq_number", message: expect.stringMatching(/>=\s*1/) }]);
  });

  it("C11: the webhook summary carries total, success and failed at the top", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const { status, body } = await callJson(`/api/v1/campaigns/${campaign}/webhooks/summary`, { apiKey: account.apiKey });
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, total: 0, success: 0, failed: 0, data: { total: 0, delivered: 0, failed: 0, pending: 0, by_event_type: {} } });
  });
});
