import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startDevServer } from "../../scripts/lib/dev-server.mjs";
import { startLab } from "../../scripts/lib/mail-lab.mjs";

interface EmailAccount {
  is_smtp_success: boolean | null;
  is_imap_success: boolean | null;
  smtp_failure_error: string | null;
  imap_failure_error: string | null;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// Issue 23: `npm run dev` started before `npm run mail-lab` failed every TLS handshake with the lab
// (workerd reads NODE_EXTRA_CA_CERTS only when it starts) until restarted by hand.
it("a dev server started before the mail lab trusts the lab's certificate once the lab is up, without a restart by hand", async () => {
  // A lab of the test's own (fresh CA, free ports), so a developer's running lab is not involved.
  const dir = mkdtempSync(join(tmpdir(), "salvo-dev-lab-"));
  const env = { MAIL_LAB_DIR: join(dir, "lab"), MAIL_LAB_JSON: join(dir, "lab.json"), MAIL_LAB_RSPAMD: "off" };
  const server = await startDevServer({ quiet: true, env });
  let runtimeDir: string | null = null;
  try {
    expect(server.output()).toContain(
      'No mail lab: campaigns report sending_status "no_mailboxes". To send for real, run `npm run mail-lab` in another terminal: this server notices it and restarts its Worker to use it.',
    );
    const lab = await startLab({ env, quiet: true });
    runtimeDir = lab.config.runtime_dir;
    try {
      // The server notices the lab, restarts its Worker on the same port and state, and saves the
      // lab's sender1 as the demo mailbox; its SMTP check runs STARTTLS against the lab's Postfix.
      const line = await until(
        "the demo mailbox's check",
        () => /Mail lab: the demo account's mailbox is \S+, email account id (\d+); (.*)\./.exec(server.output()) ?? undefined,
        180_000,
      );
      expect(server.output()).toContain("restarting the Worker to trust its CA");
      expect(line[2]).toBe("its SMTP login check passed");
      // The IMAP side of the same check (STARTTLS to the lab's Dovecot) passed too.
      const account = await until(
        "the IMAP check",
        async () => {
          const response = await fetch(`${server.url}/api/v1/email-accounts/${line[1]}`, { headers: { "X-API-Key": server.apiKey } });
          const body = (await response.json()) as EmailAccount;
          return body.is_imap_success === null ? undefined : body;
        },
        30_000,
      );
      expect(account).toMatchObject({ is_smtp_success: true, is_imap_success: true, smtp_failure_error: null, imap_failure_error: null });
    } finally {
      await lab.stop();
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    if (runtimeDir) rmSync(runtimeDir, { recursive: true, force: true });
  }
}, 420_000);
