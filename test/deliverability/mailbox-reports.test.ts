import { describe, expect, it } from "vitest";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { createManualTest } from "./fixtures";

/** CONTRACT 21.6's mailbox reports over recorded results: counts and per sender × provider rows, each test's tenancy. */

const record = (apiKey: string, testId: string, results: Record<string, unknown>[]) =>
  callJson(`/api/v1/spam-test/${testId}/results`, { method: "POST", apiKey, body: { results } });

async function world() {
  const account = await provisionAccount();
  const mailbox = await createMailbox(account.apiKey);
  const sender = mailbox.from_email;
  const { test: first } = await createManualTest(account.apiKey, { sender_accounts: [sender, "b@other.example"], provider_ids: ["gmail", "outlook"] });
  const { test: second } = await createManualTest(account.apiKey, { sender_accounts: [sender], provider_ids: ["gmail"] });
  // First test: gmail inbox and spam; outlook tab for the mailbox, b@other still pending at outlook.
  expect(
    (
      await record(account.apiKey, first.id, [
        { provider_id: "gmail", sender_email: sender, folder: "inbox" },
        { provider_id: "gmail", sender_email: "b@other.example", folder: "spam" },
        { provider_id: "outlook", sender_email: sender, folder: "tab" },
      ])
    ).status,
  ).toBe(200);
  // Second test: the mailbox not received at gmail.
  expect((await record(account.apiKey, second.id, [{ provider_id: "gmail", sender_email: sender, folder: "not_received" }])).status).toBe(200);
  return { account, mailbox, sender, first: first.id, second: second.id };
}

const get = <T>(apiKey: string, path: string) => callJson<T>(path, { apiKey });

describe("spam-test mailbox reports", () => {
  it("counts every settled result of the caller's tests, or one test's", async () => {
    const { account, first, second } = await world();
    expect(await get(account.apiKey, "/api/v1/spam-test/report/mailboxes-count")).toMatchObject({
      status: 200,
      body: { inbox_count: 1, spam_count: 1, tab_count: 1, failed_count: 1, total_email_count: 4 },
    });
    expect((await get(account.apiKey, `/api/v1/spam-test/report/mailboxes-count?spamTestId=${first}`)).body).toEqual({
      inbox_count: 1,
      spam_count: 1,
      tab_count: 1,
      failed_count: 0,
      total_email_count: 3,
    });
    expect(await get(account.apiKey, `/api/v1/smart-delivery/mailbox-count?test_id=${second}`)).toMatchObject({
      status: 200,
      body: { success: true, data: { inbox_count: 0, failed_count: 1, total_email_count: 1 } },
    });
  });

  it("answers one row per sender and provider (by address), with the mailbox's id and an inbox score", async () => {
    const { account, mailbox, sender } = await world();
    const { status, body } = await get<Record<string, unknown>[]>(account.apiKey, "/api/v1/spam-test/report/mailboxes-summary");
    expect(status).toBe(200);
    expect(body).toEqual([
      { id: `${mailbox.id}:gmail`, from_email: sender, esp: "Gmail", total_email_count: 2, inbox_count: 1, tab_count: 0, spam_count: 0, failed_count: 1, placement_score: 50 },
      { id: `${mailbox.id}:outlook`, from_email: sender, esp: "Outlook.com", total_email_count: 1, inbox_count: 0, tab_count: 1, spam_count: 0, failed_count: 0, placement_score: 0 },
      { id: "b@other.example:gmail", from_email: "b@other.example", esp: "Gmail", total_email_count: 1, inbox_count: 0, tab_count: 0, spam_count: 1, failed_count: 0, placement_score: 0 },
    ]);
    const paged = await get<{ data: { id: string }[] }>(account.apiKey, "/api/v1/smart-delivery/mailbox-summary?limit=1&offset=1");
    expect(paged.body).toEqual({ success: true, data: [expect.objectContaining({ id: `${mailbox.id}:outlook` })] });
  });

  it("refuses bad paging and another tenant's test, and shows a stranger nothing", async () => {
    const { account, first } = await world();
    for (const query of ["limit=0", "limit=101", "offset=-1", "limit=1e1"]) {
      expect((await get(account.apiKey, `/api/v1/spam-test/report/mailboxes-summary?${query}`)).status, query).toBe(422);
    }
    const stranger = await provisionAccount();
    const notFound = { error: "Spam test not found" };
    expect(await get(stranger.apiKey, `/api/v1/spam-test/report/mailboxes-count?test_id=${first}`)).toMatchObject({ status: 404, body: notFound });
    expect(await get(stranger.apiKey, `/api/v1/smart-delivery/mailbox-summary?test_id=${first}`)).toMatchObject({ status: 404, body: notFound });
    expect(await get(account.apiKey, "/api/v1/spam-test/report/mailboxes-count?test_id=x1")).toMatchObject({ status: 404, body: notFound });
    expect((await get(stranger.apiKey, "/api/v1/spam-test/report/mailboxes-count")).body).toEqual({ inbox_count: 0, spam_count: 0, tab_count: 0, failed_count: 0, total_email_count: 0 });
    expect((await get(stranger.apiKey, "/api/v1/spam-test/report/mailboxes-summary")).body).toEqual([]);
    // A client key sees only its client's tests (these belong to account-wide campaigns).
    const clientKey = (await createClientKey(account.apiKey, await createClient(account.apiKey))).api_key;
    expect((await get(clientKey, "/api/v1/spam-test/report/mailboxes-summary")).body).toEqual([]);
    expect((await get(clientKey, `/api/v1/spam-test/report/mailboxes-count?test_id=${first}`)).status).toBe(404);
  });

  it("is behind the deliverability gate", async () => {
    const account = await provisionAccount({ deliverability_enabled: false });
    const gated = { error: "Deliverability testing is not enabled for this account" };
    expect((await get(account.apiKey, "/api/v1/spam-test/report/mailboxes-count")).body).toEqual(gated);
    expect((await get(account.apiKey, "/api/v1/smart-delivery/mailbox-summary")).body).toEqual(gated);
  });
});
