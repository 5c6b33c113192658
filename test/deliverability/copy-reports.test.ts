import { describe, expect, inject, it } from "vitest";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createManualTest } from "./fixtures";
import { firstHop, headerBlock, headerObject } from "../../src/deliverability/copy-headers";
import { reverseName } from "../../src/platform/dns";

/**
 * CONTRACT 21.6's copy reports: a seed copy's headers as kept by the checker, and the reverse DNS of
 * the IP that handed it to the provider, through the test's real DNS-over-HTTPS resolver (the lab
 * test, test/mail/placement.test.ts, keeps real copies' headers).
 */

const dns = inject("dnsControl");
const setRecord = (record: { name: string; a?: string[]; aaaa?: string[]; ptr?: string[] }) =>
  fetch(`${dns}/records`, { method: "POST", body: JSON.stringify(record) }).then((r) => expect(r.status).toBe(204));

const SENDER = "a@sender.example";
const OTHER = "b@other.example";

/** A provider's first hop names the sending IP and, in its parentheses, the reverse name the provider found. */
const block = (ip: string, reverse: string) =>
  [
    `Received: from mail.sender.example (${reverse} [${ip}])`,
    "\tby mx.seed.example (Postfix) with ESMTPS id 4Xyz",
    "\tfor <seed+gmail@placement.salvo.email>; Tue, 1 Dec 2026 10:00:00 +0000 (UTC)",
    "Received: from localhost (localhost [127.0.0.1]) by mail.sender.example; Tue, 1 Dec 2026 09:59:59 +0000",
    "Subject: Q1 =?UTF-8?Q?plan?=",
    "X-Salvo-Test: abc",
    "From: A <a@sender.example>",
  ].join("\r\n");

async function world() {
  const account = await provisionAccount();
  const { test } = await createManualTest(account.apiKey, { sender_accounts: [SENDER, OTHER], provider_ids: ["gmail", "outlook"] });
  const recorded = await callJson(`/api/v1/spam-test/${test.id}/results`, {
    method: "POST",
    apiKey: account.apiKey,
    body: {
      results: [
        { provider_id: "gmail", sender_email: SENDER, folder: "inbox" },
        { provider_id: "outlook", sender_email: SENDER, folder: "spam", sender_ip: "198.51.100.9" },
        { provider_id: "gmail", sender_email: OTHER, folder: "not_received" },
        { provider_id: "outlook", sender_email: OTHER, folder: "tab" },
      ],
    },
  });
  expect(recorded.status).toBe(200);
  const cell = async (provider: string, sender: string) =>
    (await fileEnv().DB.prepare("SELECT id FROM spam_test_results WHERE spam_test_id = ? AND provider_id = ? AND sender_email = ?").bind(Number(test.id), provider, sender).first<{ id: number }>())!.id;
  const ids = { gmailA: await cell("gmail", SENDER), outlookA: await cell("outlook", SENDER), gmailB: await cell("gmail", OTHER), outlookB: await cell("outlook", OTHER) };
  return { account, test: test.id, ids };
}

const keep = (id: number, headers: string) => fileEnv().DB.prepare("UPDATE spam_test_results SET raw_headers = ? WHERE id = ?").bind(headers, id).run();

describe("seed copy headers", () => {
  it("reads a header block in order, unfolded, names as written, a repeated name as an array", () => {
    const raw = new TextEncoder().encode(`${block("203.0.113.7", "mail.sender.example")}\r\n\r\nbody line: not a header\r\n`);
    const kept = headerBlock(raw);
    expect(kept.endsWith("From: A <a@sender.example>")).toBe(true);
    const headers = headerObject(kept);
    expect(Object.keys(headers)).toEqual(["Received", "Subject", "X-Salvo-Test", "From"]);
    expect(headers.Received).toHaveLength(2);
    expect((headers.Received as string[])[0]).toBe(
      "from mail.sender.example (mail.sender.example [203.0.113.7]) by mx.seed.example (Postfix) with ESMTPS id 4Xyz for <seed+gmail@placement.salvo.email>; Tue, 1 Dec 2026 10:00:00 +0000 (UTC)",
    );
    expect(headers.Subject).toBe("Q1 =?UTF-8?Q?plan?=");
    expect(firstHop(kept)).toEqual({ ip: "203.0.113.7", reverse: "mail.sender.example" });
    expect(firstHop(block("2001:DB8::1", "unknown"))).toEqual({ ip: "2001:db8::1", reverse: null });
    // The provider's own delivery hop (LMTP, no IP) is passed over.
    expect(firstHop(`Received: from mx.seed.example by store with LMTP id 1; Tue, 1 Dec 2026 10:00:01 +0000\r\n${kept}`)).toEqual({ ip: "203.0.113.7", reverse: "mail.sender.example" });
    expect(firstHop("Received: from mx.seed.example by store with LMTP id 1; Tue, 1 Dec 2026 10:00:01 +0000")).toEqual({ ip: null, reverse: null });
    expect(headerBlock(new TextEncoder().encode(`X-Long: ${"a".repeat(70_000)}\r\nTo: b\r\n\r\n`)).length).toBeLessThanOrEqual(65_536);
    expect(reverseName("2001:db8::1")).toBe("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa");
  });

  it("answers one copy's headers, every received copy's in the /smart-delivery form, and 404 for copies not received", async () => {
    const { account, test, ids } = await world();
    await keep(ids.gmailA, block("203.0.113.7", "mail.sender.example"));
    const get = (path: string) => callJson<Record<string, unknown>>(path, { apiKey: account.apiKey });
    const one = await get(`/api/v1/spam-test/report/${test}/sender-account-wise/${ids.gmailA}/email-headers`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body)).toEqual(["Received", "Subject", "X-Salvo-Test", "From"]);
    expect(await get(`/api/v1/spam-test/report/${test}/sender-account-wise/${ids.gmailB}/email-headers`)).toMatchObject({ status: 404, body: { error: "No copy of this message was received" } });
    expect((await get(`/api/v1/spam-test/report/${test}/sender-account-wise/${ids.outlookB}/email-headers`)).status).toBe(404);
    expect((await get(`/api/v1/spam-test/report/${test}/sender-account-wise/999999999/email-headers`)).status).toBe(404);
    expect(await get(`/api/v1/smart-delivery/reply-headers?test_id=${test}`)).toMatchObject({
      status: 200,
      body: { success: true, data: [{ reply_id: String(ids.gmailA), seed_email: expect.any(String), headers: { From: "A <a@sender.example>" } }] },
    });

    const stranger = await provisionAccount();
    expect((await callJson(`/api/v1/spam-test/report/${test}/sender-account-wise/${ids.gmailA}/email-headers`, { apiKey: stranger.apiKey })).status).toBe(404);
    expect((await callJson(`/api/v1/smart-delivery/reply-headers?test_id=${test}`, { apiKey: stranger.apiKey })).status).toBe(404);
    // A result of another test is no reply of this one.
    const { test: other } = await createManualTest(account.apiKey);
    expect((await get(`/api/v1/spam-test/report/${other.id}/sender-account-wise/${ids.gmailA}/email-headers`)).status).toBe(404);
    expect((await get(`/api/v1/smart-delivery/reply-headers`)).status).toBe(422);
  });
});

describe("rdns-details", () => {
  it("takes the PTR name from the provider's Received header or a PTR query, confirms it forward, and says unknown where nothing is known", async () => {
    const { account, test, ids } = await world();
    const tag = crypto.randomUUID().slice(0, 8);
    // gmail/a: the header names mail-<tag>.sender.example, whose A includes the IP.
    await keep(ids.gmailA, block("203.0.113.7", `mail-${tag}.sender.example`));
    await setRecord({ name: `mail-${tag}.sender.example`, a: ["203.0.113.7"] });
    // outlook/a: no header kept; the recorded hop 198.51.100.9 has a PTR whose name points elsewhere.
    await setRecord({ name: "9.100.51.198.in-addr.arpa", ptr: [`liar-${tag}.other.example`] });
    await setRecord({ name: `liar-${tag}.other.example`, a: ["192.0.2.1"] });
    // outlook/b: the provider found no reverse name, and the IP has no PTR.
    await keep(ids.outlookB, block("192.0.2.200", "unknown"));

    const { status, body } = await callJson<{ from_email: string; seed_accounts: Record<string, unknown>[] }[]>(`/api/v1/spam-test/report/${test}/rdns-details`, {
      apiKey: account.apiKey,
    });
    expect(status).toBe(200);
    const seed = (id: number) => body.flatMap((row) => row.seed_accounts).find((s) => s.id === String(id));
    expect(body.map((row) => row.from_email)).toEqual([SENDER, OTHER]);
    expect(seed(ids.gmailA)).toMatchObject({ esp: "Gmail", ip: "203.0.113.7", ptr: `mail-${tag}.sender.example`, rdns_verified: true, rdns_source: "received_header" });
    expect(seed(ids.outlookA)).toMatchObject({ esp: "Outlook.com", ip: "198.51.100.9", ptr: `liar-${tag}.other.example`, rdns_verified: false, rdns_source: "ptr_query" });
    expect(seed(ids.gmailB)).toMatchObject({ ip: null, ptr: null, rdns_verified: null, rdns_source: "unknown" });
    expect(seed(ids.outlookB)).toMatchObject({ ip: "192.0.2.200", ptr: null, rdns_verified: false, rdns_source: "ptr_query" });

    // The resolver failing (SERVFAIL) is no answer: unknown, never a guess.
    await keep(ids.gmailA, block("203.0.113.8", `x.servfail.example`));
    const again = await callJson<{ data: { seed_accounts: Record<string, unknown>[] }[] }>("/api/v1/smart-delivery/rdns", { method: "POST", apiKey: account.apiKey, body: { test_id: test } });
    expect(again.status).toBe(200);
    expect(again.body.data[0]!.seed_accounts.find((s) => s.id === String(ids.gmailA))).toMatchObject({ ip: "203.0.113.8", ptr: "x.servfail.example", rdns_verified: null });

    const stranger = await provisionAccount();
    expect((await callJson(`/api/v1/spam-test/report/${test}/rdns-details`, { apiKey: stranger.apiKey })).status).toBe(404);
    expect((await callJson("/api/v1/smart-delivery/rdns", { method: "POST", apiKey: stranger.apiKey, body: { test_id: test } })).status).toBe(404);
    expect((await callJson("/api/v1/smart-delivery/rdns", { method: "POST", apiKey: account.apiKey, body: {} })).status).toBe(422);
  });
});

describe("email-content", () => {
  it("answers the run's email as kept by the sender, 404 for a run Salvo did not send, and nothing to a stranger", async () => {
    const { account, test } = await world();
    const get = (path: string, apiKey = account.apiKey) => callJson<Record<string, unknown>>(path, { apiKey });
    const none = { error: "No email of this run was sent by Salvo" };
    expect(await get(`/api/v1/spam-test/report/${test}/email-content`)).toMatchObject({ status: 404, body: none });
    const raw = "From: a@sender.example\r\nTo: seed@x\r\nSubject: Q1\r\n\r\nHi\r\n";
    await fileEnv().DB.prepare("INSERT INTO spam_test_messages (spam_test_id, run_no, subject, text, html, raw, sent_at) VALUES (?, 1, 'Q1', 'Hi', '<p>Hi</p>', ?, 1)")
      .bind(Number(test), raw)
      .run();
    expect(await get(`/api/v1/spam-test/report/${test}/email-content?run_no=1`)).toMatchObject({
      status: 200,
      body: { spamTest: test, subject: "Q1", text: "Hi", html: "<p>Hi</p>", rawEmailContent: raw },
    });
    expect(await get(`/api/v1/smart-delivery/email-content?test_id=${test}&run_no=1`)).toMatchObject({ status: 200, body: { success: true, data: { subject: "Q1" } } });
    expect(await get(`/api/v1/spam-test/report/${test}/email-content?run_no=2`)).toMatchObject({ status: 404, body: none });
    expect((await get(`/api/v1/spam-test/report/${test}/email-content?run_no=0`)).status).toBe(422);
    const stranger = await provisionAccount();
    expect(await get(`/api/v1/spam-test/report/${test}/email-content?run_no=1`, stranger.apiKey)).toMatchObject({ status: 404, body: { error: "Spam test not found" } });
    expect((await get(`/api/v1/smart-delivery/email-content?test_id=${test}`, stranger.apiKey)).status).toBe(404);
  });
});
