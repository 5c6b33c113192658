import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { provisionAccount, fileEnv, env } from "../helpers";
import { createWebhook, deliveriesOf } from "../webhooks/fixtures";

/** The real D1 binding, counting the calls that reach the database (a batch is one). */
function countingD1(d1: D1Database) {
  const counter = { trips: 0 };
  const originals = new WeakMap<object, D1PreparedStatement>();
  const wrapStatement = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== "function") return value;
        if (name === "bind") return (...args: unknown[]) => wrapStatement(value.apply(target, args));
        if (["all", "first", "run", "raw"].includes(String(name))) {
          return (...args: unknown[]) => {
            counter.trips += 1;
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
    originals.set(proxy, statement);
    return proxy;
  };
  const database = new Proxy(d1, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name === "prepare") return (query: string) => wrapStatement(target.prepare(query));
      if (name === "batch") {
        return (statements: D1PreparedStatement[]) => {
          counter.trips += 1;
          return target.batch(statements.map((statement) => originals.get(statement) ?? statement));
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { database, counter };
}

describe("D1 round trips", () => {
  it("ingests a categorised REPLY with its webhook deliveries in two: one read batch, one write batch", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    await addLeads(account.apiKey, campaign, ["trips@rt.example"]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED"] });

    const { database, counter } = countingD1(fileEnv().DB);
    const ctx = createExecutionContext();
    const response = await createApp().fetch(
      new Request(`http://salvo.test/api/v1/campaigns/${campaign}/events`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": account.apiKey, "CF-Connecting-IP": "10.9.9.9" },
        body: JSON.stringify({
          events: [{ type: "REPLY", lead_email: "trips@rt.example", occurred_at: "2026-03-02T10:00:00Z", body: "Yes", category_id: 1 }],
        }),
      }),
      { ...env, DB: database },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    expect(counter.trips).toBe(2);
    const kinds = (await deliveriesOf(hook.id)).map((d) => d.event_type).sort();
    expect(kinds).toEqual(["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED"]);
  });
});
