import { describe, expect, inject, it } from "vitest";
import { config } from "../../src/config";
import { checkImap } from "../../src/mail/imap";
import { checkSmtp } from "../../src/mail/smtp";
import { mailPolicy } from "../../src/platform/outbound";
import { mailboxCount } from "../db";
import { ADMIN_TOKEN, callJson, provisionAccount, fileEnv, env } from "../helpers";
import { mailboxBody } from "./fixtures";

const target = inject("outboundTarget");

/** A TCP listener of the suite's targets, and how many connections it took. */
async function listener() {
  const { port } = (await (await fetch(`${target}/listeners`, { method: "POST" })).json()) as { port: number };
  return { port, connections: async () => ((await (await fetch(`${target}/listeners/${port}`)).json()) as { connections: number }).connections };
}

const save = (apiKey: string, body: Record<string, unknown>) =>
  callJson<{ details?: { path: string; message: string }[] }>("/api/v1/email-accounts/save", { method: "POST", apiKey, body: mailboxBody(body) });

describe("mailbox, seed and tracking hosts and the outbound rule (issue 23)", () => {
  // What the attack pass got accepted, and names that resolve inside.
  const refused = ["::7f00:1", "::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "mail.lan", "mail.corp", "router.home.arpa", "kubernetes.default.svc", "localtest.me", "smtp.127.0.0.1.nip.io"];

  it("refuses them as SMTP and IMAP hosts (422), naming why", async () => {
    const account = await provisionAccount();
    for (const host of refused) {
      for (const field of ["smtp_host", "imap_host"]) {
        const { status, body } = await save(account.apiKey, { [field]: host });
        expect(status, `${field} ${host}`).toBe(422);
        expect(body.details).toEqual([{ path: field, message: expect.stringMatching(new RegExp(`^${field} must be a public host \\(`)) }]);
      }
    }
    expect(await mailboxCount(account.id)).toBe(0);
    const named = await save(account.apiKey, { smtp_host: "localtest.me" });
    expect(named.body.details![0]!.message).toBe("smtp_host must be a public host (localtest.me resolves to 127.0.0.1, a loopback address)");
  });

  it("refuses private tracking domains and seed hosts", async () => {
    const account = await provisionAccount();
    for (const domain of ["track.corp", "track.lan", "links.internal", "https://track.home.arpa/", "localtest.me"]) {
      const { status, body } = await save(account.apiKey, { custom_tracking_url: domain });
      expect(status, domain).toBe(422);
      expect(body.details![0]!.path).toBe("custom_tracking_url");
    }
    const fine = await save(account.apiKey, { custom_tracking_url: "https://Track.Example.org/" });
    expect(fine.status).toBe(200);
    for (const imap_host of ["64:ff9b::7f00:1", "::127.0.0.1", "seeds.corp", "imap.localtest.me"]) {
      const seed = await callJson("/admin/v1/seed-mailboxes", {
        method: "POST",
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        body: { provider_id: "naver", email: `s-${crypto.randomUUID().slice(0, 8)}@seeds.example.com`, imap_host, password: "p" },
      });
      expect(seed.status, imap_host).toBe(422);
    }
  });

  it("is applied when the mail kit connects, not only at save: no connection is opened to a refused host", async () => {
    const inside = await listener();
    const policy = mailPolicy(config(fileEnv()));
    const login = { port: inside.port, security: "tls" as const, username: "u", password: "p" };
    for (const host of ["127.0.0.1", "localtest.me", "::ffff:127.0.0.1"]) {
      const smtp = await checkSmtp({ ...login, host }, { allowPlain: false, outbound: policy });
      expect(smtp, host).toEqual({ ok: false, failure: { kind: "connection", code: null, text: expect.stringMatching(/^refused to connect: .*(loopback)/) } });
      const imap = await checkImap({ ...login, host }, { allowPlain: false, outbound: policy });
      expect(imap, host).toEqual({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/^refused to connect: .*(loopback)/) } });
    }
    expect(await inside.connections()).toBe(0);
    // The development switch (a mail sink on this machine) lets the same connection through.
    await checkSmtp({ ...login, host: "127.0.0.1" }, { allowPlain: false, outbound: mailPolicy(config({ ...env, ALLOW_LOCAL_MAIL_HOSTS: "true" })), timeoutMs: 2_000 });
    expect(await inside.connections()).toBe(1);
  });
});
