import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson, provisionAccount } from "../helpers";
import { createManualTest } from "./fixtures";

const A = "a@sender.example";
const B = "b@other.example";
const seed = (provider: string) => `seed+${provider}@placement.salvo.email`;

const record = (apiKey: string, testId: string, results: Record<string, unknown>[], runNo?: number) =>
  callJson<Record<string, unknown>>(`/api/v1/spam-test/${testId}/results`, { method: "POST", apiKey, body: { run_no: runNo, results } });

/**
 * Two senders on two domains, three providers in three groups: gmail/a inbox (scored clean, on one IP
 * list and one domain list), gmail/b spam (scored, on a relay list), outlook/a tab (not scored, a
 * link broken there), outlook/b not received, gmx/a still pending, gmx/b inbox with no findings.
 */
const RESULTS = [
  {
    provider_id: "gmail",
    sender_email: A,
    folder: "inbox",
    received_at: "2026-12-01T10:00:00Z",
    mailbox_folder: "INBOX",
    message_id: "<m1@sender.example>",
    spam_score: 1.5,
    spam_required: 15,
    spam_action: "no action",
    spam_symbols: [
      { name: "RBL_SPAMHAUS_SBL", score: 4, description: "From address is listed in Spamhaus SBL" },
      { name: "RCVD_IN_DNSWL_NONE", score: 0 },
      { name: "MIME_GOOD", score: -0.1, description: "Known content-type" },
      { name: "DBL_SPAM", score: 6.5 },
      { name: "URIBL_BLOCKED", score: 0 },
    ],
    spf: "PASS",
    dkim: "pass",
    dmarc: "Pass",
    sender_ip: "203.0.113.7",
    sender_host: "mail.sender.example",
    link_report: [
      { url: "https://sender.example/offer", status: 200, final_url: "https://sender.example/offer", redirects: 0, ok: true },
      { url: "https://bit.example/x", status: 200, final_url: "https://landing.example/", redirects: 2, ok: true },
    ],
  },
  {
    provider_id: "gmail",
    sender_email: B,
    folder: "spam",
    mailbox_folder: "[Gmail]/Spam",
    spam_score: 16.2,
    spam_required: 15,
    spam_action: "add header",
    spam_symbols: [
      { name: "RECEIVED_SPAMCOP", score: 2 },
      { name: "RBL_SENDERSCORE_FAIL", score: 0 },
      { name: "RCVD_IN_MSPIKE_H2", score: -0.5 },
    ],
    spf: "softfail",
    dkim: "fail",
    dmarc: "fail",
    sender_ip: "198.51.100.9",
    sender_host: "smtp.other.example",
    link_report: [{ url: "https://other.example/dead", status: 404, final_url: null, redirects: 0, ok: false, error: "HTTP 404" }],
  },
  {
    provider_id: "outlook",
    sender_email: A,
    folder: "tab",
    spf: "pass",
    dkim: "pass",
    dmarc: "none",
    sender_ip: "203.0.113.7",
    sender_host: "mail.sender.example",
    link_report: [{ url: "https://bit.example/x", status: 404, final_url: "https://landing.example/gone", redirects: 2, ok: false, error: "HTTP 404" }],
  },
  { provider_id: "outlook", sender_email: B, folder: "not_received" },
  { provider_id: "gmx", sender_email: B, folder: "inbox" },
];

async function fedTest() {
  const account = await provisionAccount();
  const { test } = await createManualTest(account.apiKey, { provider_ids: ["gmail", "outlook", "gmx"], sender_accounts: [A, B] });
  const answer = await record(account.apiKey, test.id, RESULTS);
  expect(answer.body).toEqual({ ok: true, recorded: 5 });
  const senders = (await callJson<{ id: string; from_email: string }[]>(`/api/v1/spam-test/report/${test.id}/sender-accounts`, { apiKey: account.apiKey })).body;
  const senderId = (email: string) => senders.find((s) => s.from_email === email)!.id;
  return { apiKey: account.apiKey, testId: test.id, senderId };
}

const get = (apiKey: string, path: string, method = "GET", body?: unknown) => callJson<unknown>(path, { apiKey, method, body });

/** The hosted form's answer, checked to be the /smart-delivery form's `data` too. */
async function bothForms(apiKey: string, testId: string, hosted: [string, string], delivery?: [string, string]) {
  const [method, suffix] = hosted;
  const first = await get(apiKey, `/api/v1/spam-test/report/${testId}/${suffix}`, method);
  expect(first.status, suffix).toBe(200);
  if (delivery) {
    const [deliveryMethod, path] = delivery;
    const second =
      deliveryMethod === "GET"
        ? await get(apiKey, `/api/v1/smart-delivery/${path}?test_id=${testId}`)
        : await get(apiKey, `/api/v1/smart-delivery/${path}`, "POST", { test_id: testId });
    expect(second.status, path).toBe(200);
    expect(second.body, path).toEqual({ success: true, data: first.body });
  }
  return first.body;
}

const noReply = null;
const unchecked = { totalBlacklist: null, blacklists: [] };

describe("spam-test reports from recorded findings", () => {
  it("sender-account-wise: per sender its counts, and per seed the folder and what the copy showed", async () => {
    const { apiKey, testId, senderId } = await fedTest();
    const body = await bothForms(apiKey, testId, ["GET", "sender-account-wise"], ["GET", "sender-report"]);
    const gmailA = {
      provider_id: "gmail",
      provider_name: "Gmail",
      email: seed("gmail"),
      folder: "inbox",
      reply: {
        mail_folder: "inbox",
        mailbox_folder: "INBOX",
        message_id: "<m1@sender.example>",
        received_at: "2026-12-01T10:00:00.000Z",
        spam_score: 1.5,
        spf_result: { status: "pass" },
        dkim_result: { status: "pass" },
        dmarc_result: { status: "pass" },
        rdns_result: { ip: "203.0.113.7", rdns: "mail.sender.example" },
        // The DNSWL allow list and the DBL domain list are no IP block-list hits.
        blacklist_status: { totalBlacklist: 1, blacklists: ["RBL_SPAMHAUS_SBL"] },
      },
    };
    expect(body).toEqual([
      {
        id: senderId(A),
        email: A,
        inbox_count: 1,
        tab_count: 1,
        spam_count: 0,
        not_received_count: 0,
        pending_count: 1,
        total_count: 3,
        details: [
          { id: expect.any(String), ...gmailA },
          {
            id: expect.any(String),
            provider_id: "outlook",
            provider_name: "Outlook.com",
            email: seed("outlook"),
            folder: "tab",
            reply: {
              mail_folder: "tab",
              mailbox_folder: null,
              message_id: null,
              received_at: null,
              spam_score: null,
              spf_result: { status: "pass" },
              dkim_result: { status: "pass" },
              dmarc_result: { status: "none" },
              rdns_result: { ip: "203.0.113.7", rdns: "mail.sender.example" },
              blacklist_status: unchecked,
            },
          },
          { id: expect.any(String), provider_id: "gmx", provider_name: "GMX", email: seed("gmx"), folder: "pending", reply: noReply },
        ],
      },
      {
        id: senderId(B),
        email: B,
        inbox_count: 1,
        tab_count: 0,
        spam_count: 1,
        not_received_count: 1,
        pending_count: 0,
        total_count: 3,
        details: [
          {
            id: expect.any(String),
            provider_id: "gmail",
            provider_name: "Gmail",
            email: seed("gmail"),
            folder: "spam",
            reply: {
              mail_folder: "spam",
              mailbox_folder: "[Gmail]/Spam",
              message_id: null,
              received_at: null,
              spam_score: 16.2,
              spf_result: { status: "softfail" },
              dkim_result: { status: "fail" },
              dmarc_result: { status: "fail" },
              rdns_result: { ip: "198.51.100.9", rdns: "smtp.other.example" },
              // A failed lookup (…_FAIL) and a good-reputation answer (scored below zero) are no hits.
              blacklist_status: { totalBlacklist: 1, blacklists: ["RECEIVED_SPAMCOP"] },
            },
          },
          { id: expect.any(String), provider_id: "outlook", provider_name: "Outlook.com", email: seed("outlook"), folder: "not_received", reply: noReply },
          {
            id: expect.any(String),
            provider_id: "gmx",
            provider_name: "GMX",
            email: seed("gmx"),
            folder: "inbox",
            reply: {
              mail_folder: "inbox",
              mailbox_folder: null,
              message_id: null,
              received_at: null,
              spam_score: null,
              spf_result: { status: null },
              dkim_result: { status: null },
              dmarc_result: { status: null },
              rdns_result: { ip: null, rdns: null },
              blacklist_status: unchecked,
            },
          },
        ],
      },
    ]);
  });

  it("group-wise: the provider counts summed per group with its region, pending left out of the adjusted total", async () => {
    const { apiKey, testId } = await fedTest();
    expect(await bothForms(apiKey, testId, ["POST", "groupwise"], ["POST", "geo-report"])).toEqual({
      overallTotalCount: 6,
      status: "active",
      result: [
        { group_id: "google", group_name: "Google", region_id: "global", region_name: "Global", inbox_count: 1, tab_count: 0, spam_count: 1, not_received_count: 0, adjusted_total_email_count: 2 },
        { group_id: "microsoft", group_name: "Microsoft", region_id: "global", region_name: "Global", inbox_count: 0, tab_count: 1, spam_count: 0, not_received_count: 1, adjusted_total_email_count: 2 },
        { group_id: "united-internet", group_name: "United Internet", region_id: "eu", region_name: "Europe", inbox_count: 1, tab_count: 0, spam_count: 0, not_received_count: 0, adjusted_total_email_count: 1 },
      ],
    });
  });

  it("spam filter details: every scored copy with its score, threshold, action and rules", async () => {
    const { apiKey, testId } = await fedTest();
    expect(await bothForms(apiKey, testId, ["GET", "spam-filter-details"], ["POST", "spam-filter"])).toEqual([
      {
        email: A,
        scored_count: 1,
        average_score: 1.5,
        details: [
          {
            id: expect.any(String),
            provider_id: "gmail",
            provider_name: "Gmail",
            email: seed("gmail"),
            folder: "inbox",
            spam_score: 1.5,
            spam_required: 15,
            spam_action: "no action",
            is_spam: false,
            symbols: [
              { name: "RBL_SPAMHAUS_SBL", score: 4, description: "From address is listed in Spamhaus SBL" },
              { name: "RCVD_IN_DNSWL_NONE", score: 0, description: null },
              { name: "MIME_GOOD", score: -0.1, description: "Known content-type" },
              { name: "DBL_SPAM", score: 6.5, description: null },
              { name: "URIBL_BLOCKED", score: 0, description: null },
            ],
          },
        ],
      },
      {
        email: B,
        scored_count: 1,
        average_score: 16.2,
        details: [
          {
            id: expect.any(String),
            provider_id: "gmail",
            provider_name: "Gmail",
            email: seed("gmail"),
            folder: "spam",
            spam_score: 16.2,
            spam_required: 15,
            spam_action: "add header",
            is_spam: true,
            symbols: [
              { name: "RECEIVED_SPAMCOP", score: 2, description: null },
              { name: "RBL_SENDERSCORE_FAIL", score: 0, description: null },
              { name: "RCVD_IN_MSPIKE_H2", score: -0.5, description: null },
            ],
          },
        ],
      },
    ]);
  });

  it("SPF, DKIM and DMARC details: each method's verdict on every received copy, tallied per sender", async () => {
    const { apiKey, testId } = await fedTest();
    const row = (provider: string, name: string, folder: string, status: string | null) => ({
      id: expect.any(String),
      provider_id: provider,
      provider_name: name,
      email: seed(provider),
      folder,
      status,
    });
    expect(await bothForms(apiKey, testId, ["GET", "spf-details"], ["GET", "spf"])).toEqual([
      { email: A, pass_count: 2, fail_count: 0, not_checked_count: 0, details: [row("gmail", "Gmail", "inbox", "pass"), row("outlook", "Outlook.com", "tab", "pass")] },
      { email: B, pass_count: 0, fail_count: 1, not_checked_count: 1, details: [row("gmail", "Gmail", "spam", "softfail"), row("gmx", "GMX", "inbox", null)] },
    ]);
    expect(await bothForms(apiKey, testId, ["GET", "dkim-details"], ["GET", "dkim"])).toEqual([
      { email: A, pass_count: 2, fail_count: 0, not_checked_count: 0, details: [row("gmail", "Gmail", "inbox", "pass"), row("outlook", "Outlook.com", "tab", "pass")] },
      { email: B, pass_count: 0, fail_count: 1, not_checked_count: 1, details: [row("gmail", "Gmail", "spam", "fail"), row("gmx", "GMX", "inbox", null)] },
    ]);
    expect(await bothForms(apiKey, testId, ["GET", "dmarc-details"])).toEqual([
      { email: A, pass_count: 1, fail_count: 1, not_checked_count: 0, details: [row("gmail", "Gmail", "inbox", "pass"), row("outlook", "Outlook.com", "tab", "none")] },
      { email: B, pass_count: 0, fail_count: 1, not_checked_count: 1, details: [row("gmail", "Gmail", "spam", "fail"), row("gmx", "GMX", "inbox", null)] },
    ]);
  });

  it("blacklist, IP and domain details: block lists only from the filter's list rules, null where no copy was scored", async () => {
    const { apiKey, testId } = await fedTest();
    expect(await bothForms(apiKey, testId, ["GET", "blacklist"], ["GET", "blacklists"])).toEqual([
      {
        email: A,
        details: [
          {
            id: expect.any(String),
            provider_id: "gmail",
            provider_name: "Gmail",
            email: seed("gmail"),
            folder: "inbox",
            ip: "203.0.113.7",
            host: "mail.sender.example",
            checked: true,
            blacklist_count: 1,
            blacklists: [{ name: "RBL_SPAMHAUS_SBL", score: 4, description: "From address is listed in Spamhaus SBL" }],
          },
          {
            id: expect.any(String),
            provider_id: "outlook",
            provider_name: "Outlook.com",
            email: seed("outlook"),
            folder: "tab",
            ip: "203.0.113.7",
            host: "mail.sender.example",
            checked: false,
            blacklist_count: null,
            blacklists: [],
          },
        ],
      },
      {
        email: B,
        details: [
          {
            id: expect.any(String),
            provider_id: "gmail",
            provider_name: "Gmail",
            email: seed("gmail"),
            folder: "spam",
            ip: "198.51.100.9",
            host: "smtp.other.example",
            checked: true,
            blacklist_count: 1,
            blacklists: [{ name: "RECEIVED_SPAMCOP", score: 2, description: null }],
          },
          { id: expect.any(String), provider_id: "gmx", provider_name: "GMX", email: seed("gmx"), folder: "inbox", ip: null, host: null, checked: false, blacklist_count: null, blacklists: [] },
        ],
      },
    ]);

    expect(await bothForms(apiKey, testId, ["GET", "ip-analytics"], ["GET", "ip-details"])).toEqual({
      total_ips: 2,
      total_blacklist_count: 2,
      ips: [
        {
          ip: "203.0.113.7",
          hosts: ["mail.sender.example"],
          senders: [A],
          message_count: 2,
          checked_count: 1,
          blacklist_count: 1,
          blacklists: [{ name: "RBL_SPAMHAUS_SBL", description: "From address is listed in Spamhaus SBL", count: 1 }],
        },
        {
          ip: "198.51.100.9",
          hosts: ["smtp.other.example"],
          senders: [B],
          message_count: 1,
          checked_count: 1,
          blacklist_count: 1,
          blacklists: [{ name: "RECEIVED_SPAMCOP", description: null, count: 1 }],
        },
      ],
    });

    expect(await bothForms(apiKey, testId, ["GET", "domain-blacklist"], ["GET", "domain-blacklist"])).toEqual([
      {
        domain: "sender.example",
        senders: [A],
        message_count: 2,
        spf: { pass_count: 2, fail_count: 0 },
        dkim: { pass_count: 2, fail_count: 0 },
        dmarc: { pass_count: 1, fail_count: 1 },
        link_domains: ["sender.example", "bit.example"],
        checked_count: 1,
        // A lookup the list refused (URIBL_BLOCKED) is no hit.
        blacklist_count: 1,
        blacklists: [{ name: "DBL_SPAM", description: null, count: 1 }],
      },
      {
        domain: "other.example",
        senders: [B],
        message_count: 2,
        spf: { pass_count: 0, fail_count: 1 },
        dkim: { pass_count: 0, fail_count: 1 },
        dmarc: { pass_count: 0, fail_count: 1 },
        link_domains: ["other.example"],
        checked_count: 1,
        blacklist_count: 0,
        blacklists: [],
      },
    ]);
  });

  it("link report: each URL once, broken when any copy found it broken", async () => {
    const { apiKey, testId } = await fedTest();
    expect(await bothForms(apiKey, testId, ["GET", "link-report"])).toEqual({
      checked_messages: 3,
      total_links: 3,
      broken_count: 2,
      redirected_count: 1,
      links: [
        { url: "https://sender.example/offer", ok: true, status: 200, final_url: "https://sender.example/offer", redirects: 0, error: null, message_count: 1, senders: [A] },
        { url: "https://bit.example/x", ok: false, status: 404, final_url: "https://landing.example/gone", redirects: 2, error: "HTTP 404", message_count: 2, senders: [A] },
        { url: "https://other.example/dead", ok: false, status: 404, final_url: null, redirects: 0, error: "HTTP 404", message_count: 1, senders: [B] },
      ],
    });
  });

  it("a later result for a cell replaces its findings; a run number picks the run", async () => {
    const { apiKey, testId } = await fedTest();
    await record(apiKey, testId, [{ provider_id: "gmail", sender_email: A, folder: "spam", spf: "fail" }]);
    const t = schema.spamTestResults;
    const stored = await testDb()
      .select({ folder: t.folder, spf: t.spf, dkim: t.dkim, spam_score: t.spamScore, spam_symbols: t.spamSymbols, sender_ip: t.senderIp, link_report: t.linkReport, mailbox_folder: t.mailboxFolder, message_id: t.messageId })
      .from(t)
      .where(and(eq(t.spamTestId, Number(testId)), eq(t.providerId, "gmail"), eq(t.senderEmail, A)))
      .get();
    expect(stored).toEqual({ folder: "spam", spf: "fail", dkim: null, spam_score: null, spam_symbols: null, sender_ip: null, link_report: null, mailbox_folder: null, message_id: null });

    const runOne = await get(apiKey, `/api/v1/spam-test/report/${testId}/spf-details?run_no=1`);
    expect((runOne.body as { pass_count: number; fail_count: number }[]).map((r) => [r.pass_count, r.fail_count])).toEqual([
      [1, 1],
      [0, 1],
    ]);
    // A run that never started has no results: every sender with empty details.
    const runTwo = await get(apiKey, `/api/v1/smart-delivery/spf?test_id=${testId}&run_no=2`);
    expect(runTwo.body).toEqual({
      success: true,
      data: [
        { email: A, pass_count: 0, fail_count: 0, not_checked_count: 0, details: [] },
        { email: B, pass_count: 0, fail_count: 0, not_checked_count: 0, details: [] },
      ],
    });
  });
});

describe("findings on the results route", () => {
  it("refuses verdicts outside RFC 8601's words, bad addresses, malformed rules and links, and findings on a message not received, storing nothing", async () => {
    const account = await provisionAccount();
    const { test } = await createManualTest(account.apiKey, { provider_ids: ["gmail"], sender_accounts: [A] });
    const cell = { provider_id: "gmail", sender_email: A, folder: "inbox" };
    const cases: [Record<string, unknown>, string][] = [
      [{ spf: "maybe" }, "results.0.spf"],
      [{ dmarc: "softfail" }, "results.0.dmarc"],
      [{ dkim: "softfail" }, "results.0.dkim"],
      [{ sender_ip: "999.1.1.1" }, "results.0.sender_ip"],
      [{ spam_score: "high" }, "results.0.spam_score"],
      [{ spam_symbols: [{ name: "", score: 1 }] }, "results.0.spam_symbols.0.name"],
      [{ link_report: [{ url: "not a url", status: 200, final_url: null, redirects: 0, ok: true }] }, "results.0.link_report.0.url"],
      [{ link_report: [{ url: "https://x.example/", status: 200, final_url: null, redirects: -1, ok: true }] }, "results.0.link_report.0.redirects"],
      [{ link_report: [{ url: "mailto:someone@x.example", status: null, final_url: null, redirects: 0, ok: true }] }, "results.0.link_report.0.url"],
      [{ folder: "not_received", spam_score: 3 }, "results.0.spam_score"],
      [{ folder: "not_received", dkim: "pass" }, "results.0.dkim"],
    ];
    for (const [fields, path] of cases) {
      const answer = await record(account.apiKey, test.id, [{ ...cell, ...fields }]);
      expect(answer.status, JSON.stringify(fields)).toBe(422);
      expect(answer.body, JSON.stringify(fields)).toMatchObject({ details: expect.arrayContaining([expect.objectContaining({ path })]) });
    }
    const t = schema.spamTestResults;
    const rows = await testDb().select({ folder: t.folder, spf: t.spf, dkim: t.dkim, dmarc: t.dmarc, spam_score: t.spamScore, sender_ip: t.senderIp }).from(t).where(eq(t.spamTestId, Number(test.id))).all();
    expect(rows).toEqual([{ folder: "pending", spf: null, dkim: null, dmarc: null, spam_score: null, sender_ip: null }]);

    // Verdicts are read in any case and kept in lower case; an IPv6 sender is an address too.
    expect((await record(account.apiKey, test.id, [{ ...cell, spf: "SoftFail", dkim: "PERMERROR", dmarc: "TempError", sender_ip: "2001:db8::25" }])).status).toBe(200);
    const stored = await testDb().select({ spf: t.spf, dkim: t.dkim, dmarc: t.dmarc, sender_ip: t.senderIp }).from(t).where(eq(t.spamTestId, Number(test.id))).get();
    expect(stored).toEqual({ spf: "softfail", dkim: "permerror", dmarc: "temperror", sender_ip: "2001:db8::25" });
  });
});

const HOSTED: [string, string][] = [
  ["GET", "sender-account-wise"],
  ["POST", "groupwise"],
  ["GET", "spam-filter-details"],
  ["GET", "spf-details"],
  ["GET", "dkim-details"],
  ["GET", "dmarc-details"],
  ["GET", "blacklist"],
  ["GET", "ip-analytics"],
  ["GET", "domain-blacklist"],
  ["GET", "link-report"],
];
const DELIVERY: [string, string][] = [
  ["GET", "sender-report"],
  ["POST", "geo-report"],
  ["POST", "spam-filter"],
  ["GET", "spf"],
  ["GET", "dkim"],
  ["GET", "blacklists"],
  ["GET", "ip-details"],
  ["GET", "domain-blacklist"],
];
const NOT_FOUND = { error: "Spam test not found" };

function deliveryCall(apiKey: string, [method, path]: [string, string], testId: unknown) {
  return method === "GET"
    ? get(apiKey, `/api/v1/smart-delivery/${path}${testId === undefined ? "" : `?test_id=${String(testId)}`}`)
    : get(apiKey, `/api/v1/smart-delivery/${path}`, "POST", testId === undefined ? {} : { test_id: testId });
}

describe("report routes: tenancy, ids and the gate", () => {
  it("answers another account's test, a missing one and a malformed id with the same 404; a request naming no test is a 422", async () => {
    const { testId } = await fedTest();
    const other = await provisionAccount();
    for (const [method, suffix] of HOSTED) {
      for (const id of [testId, "999999999", "abc"]) {
        const answer = await get(other.apiKey, `/api/v1/spam-test/report/${id}/${suffix}`, method);
        expect([answer.status, answer.body], `${suffix} ${id}`).toEqual([404, NOT_FOUND]);
      }
      const badRun = await get(other.apiKey, `/api/v1/spam-test/report/${testId}/${suffix}?run_no=0`, method);
      expect(badRun.status, `${suffix} run_no=0`).toBe(422);
    }
    for (const route of DELIVERY) {
      for (const id of [testId, Number(testId), "999999999", "abc"]) {
        if (route[0] === "GET" && typeof id === "number") continue;
        const answer = await deliveryCall(other.apiKey, route, id);
        expect([answer.status, answer.body], `${route[1]} ${id}`).toEqual([404, NOT_FOUND]);
      }
      const unnamed = await deliveryCall(other.apiKey, route, undefined);
      expect(unnamed.status, `${route[1]} without a test`).toBe(422);
    }
  });

  it("is behind the deliverability gate", async () => {
    const account = await provisionAccount({ deliverability_enabled: false });
    const gated = { error: "Deliverability testing is not enabled for this account" };
    expect((await get(account.apiKey, "/api/v1/spam-test/report/1/sender-account-wise")).body).toEqual(gated);
    expect((await deliveryCall(account.apiKey, ["GET", "sender-report"], "1")).body).toEqual(gated);
  });
});
