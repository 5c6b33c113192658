import { describe, expect, inject, it, vi } from "vitest";
import { checkImap } from "../../src/mail/imap";
import { checkSmtp } from "../../src/mail/smtp";

/**
 * Mail servers that do not stop talking (issue 23): before the shared line socket, one mailbox
 * check read 48 MB over 40 s and an endless line grew the dev server by 1.3 GB. Each case here must
 * end in a `connection` failure that names the bound that cut it, while the server was still
 * sending, having been sent a bounded amount.
 */
const hostile = inject("hostileMail");
const SECONDS = 1_000;
/** What a server may have pushed into the connection's buffers beyond what the client read. */
const SLACK = 16 * 1024 * 1024;

const smtp = (port: number, security: "plain" | "tls") => ({ host: "127.0.0.1", port, security, username: "u@hostile.test", password: "p" }) as const;
const imap = smtp;

async function sentAtMost(name: string, bytes: number) {
  // The server sees the close a moment after the client decides.
  await vi.waitFor(async () => expect((await (await fetch(`${hostile.stats}/${name}`)).json()) as { open: boolean }).toMatchObject({ open: false }), {
    timeout: 5 * SECONDS,
  });
  const { written } = (await (await fetch(`${hostile.stats}/${name}`)).json()) as { written: number };
  expect(written).toBeLessThan(bytes + SLACK);
}

describe("SMTP against a hostile server", () => {
  for (const security of ["plain", "tls"] as const) {
    const ports = security === "plain" ? hostile.smtp : hostile.smtpTls;

    it(`ends an endless line at the reply's byte cap (${security})`, async () => {
      const result = await checkSmtp(smtp(ports.endlessLine, security), { allowPlain: true, timeoutMs: 20 * SECONDS });
      expect(result).toMatchObject({ ok: false, failure: { kind: "connection", code: null, text: expect.stringMatching(/more than this exchange allows.*greeting/) } });
      await sentAtMost(`smtp-${security}-endlessLine`, 64 * 1024);
    });

    it(`ends an endless multi-line reply at the reply's byte cap (${security})`, async () => {
      const result = await checkSmtp(smtp(ports.flood, security), { allowPlain: true, timeoutMs: 20 * SECONDS });
      expect(result).toMatchObject({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/more than this exchange allows.*EHLO/) } });
      await sentAtMost(`smtp-${security}-flood`, 64 * 1024);
    });

    it(`ends a greeting dripped a byte at a time at the command's one deadline (${security})`, async () => {
      const result = await checkSmtp(smtp(ports.drip, security), { allowPlain: true, timeoutMs: 1 * SECONDS });
      expect(result).toMatchObject({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/^timed out after 1000 ms waiting for the greeting/) } });
    });
  }
});

describe("IMAP against a hostile server", () => {
  for (const security of ["plain", "tls"] as const) {
    const ports = security === "plain" ? hostile.imap : hostile.imapTls;

    it(`ends an endless line at the line cap (${security})`, async () => {
      const result = await checkImap(imap(ports.endlessLine, security), { allowPlain: true, timeoutMs: 20 * SECONDS });
      expect(result).toEqual({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/a line over 1048576 bytes.*greeting/) } });
      await sentAtMost(`imap-${security}-endlessLine`, 1024 * 1024);
    });

    it(`ends endless untagged responses at the command's byte cap (${security})`, async () => {
      const result = await checkImap(imap(ports.flood, security), { allowPlain: true, timeoutMs: 20 * SECONDS });
      expect(result).toEqual({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/more than this exchange allows.*CAPABILITY/) } });
      await sentAtMost(`imap-${security}-flood`, 4 * 1024 * 1024);
    });

    it(`ends a greeting dripped a byte at a time at the one deadline (${security})`, async () => {
      const result = await checkImap(imap(ports.drip, security), { allowPlain: true, timeoutMs: 1 * SECONDS });
      expect(result).toEqual({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/^timed out after 1000 ms waiting for the greeting/) } });
    });
  }
});
