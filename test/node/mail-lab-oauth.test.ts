import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect as netConnect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authorizationUrl,
  consent,
  labRequest,
  labTokens,
  oauthbearer,
  pkcePair,
  refreshTokens,
  revokeGrants,
  tokenRequest,
  xoauth2,
} from "../../scripts/lib/lab-oauth-client.mjs";
import { startLab, type MailLab, type StartedLab } from "../../scripts/lib/mail-lab.mjs";

// Issue 24, item 5: the lab's own OAuth 2.0 / OpenID Connect provider, and Dovecot (IMAP, and
// Postfix's submission through it) accepting its access tokens with XOAUTH2 and OAUTHBEARER. A lab of
// this file's own, with access tokens that live 20 s.
const ACCESS_TTL = 10;
const SENDER = "sender7@lab.salvo.test";
const PASSWORD_USER = "sender8@lab.salvo.test";
let started: StartedLab;
let lab: MailLab;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "salvo-lab-oauth-"));
  started = await startLab({
    quiet: true,
    env: { MAIL_LAB_DIR: join(dir, "lab"), MAIL_LAB_JSON: join(dir, "lab.json"), MAIL_LAB_RSPAMD: "off", MAIL_LAB_OAUTH_ACCESS_TTL: String(ACCESS_TTL) },
  });
  lab = started.config;
}, 180_000);

afterAll(async () => {
  await started?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (lab) rmSync(lab.runtime_dir, { recursive: true, force: true });
}, 60_000);

/** A line-by-line conversation with a mail server, upgraded to TLS in place for STARTTLS. */
class Wire {
  #buffer = "";
  #waiting: ((line: string) => void)[] = [];
  #failure: Error | null = null;
  socket!: Socket | TLSSocket;

  static async open(port: number, tls: boolean): Promise<Wire> {
    const wire = new Wire();
    const ca = readFileSync(lab.ca_file);
    await new Promise<void>((resolve, reject) => {
      const socket = tls ? tlsConnect({ host: "127.0.0.1", port, ca, servername: "localhost" }, resolve) : netConnect(port, "127.0.0.1", resolve);
      socket.once("error", reject);
      wire.attach(socket);
    });
    return wire;
  }

  attach(socket: Socket | TLSSocket) {
    this.socket = socket;
    socket.setTimeout(20_000, () => socket.destroy(new Error("mail server timeout")));
    socket.on("data", (chunk: Buffer) => {
      this.#buffer += chunk.toString("latin1");
      this.#flush();
    });
    socket.on("error", (error) => (this.#failure = error));
  }

  #flush() {
    let end: number;
    while (this.#waiting.length > 0 && (end = this.#buffer.indexOf("\r\n")) >= 0) {
      const line = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      this.#waiting.shift()!(line);
    }
  }

  line(): Promise<string> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#flush();
    });
  }

  write(text: string) {
    this.socket.write(`${text}\r\n`);
  }

  async starttls() {
    const plain = this.socket;
    plain.removeAllListeners("data");
    const secure = await new Promise<TLSSocket>((resolve, reject) => {
      const upgraded = tlsConnect({ socket: plain, ca: readFileSync(lab.ca_file), servername: "localhost" }, () => resolve(upgraded));
      upgraded.once("error", reject);
    });
    this.attach(secure);
  }

  close() {
    this.socket.destroy();
  }
}

/** One SMTP reply (every continuation line), as "code text". */
async function reply(wire: Wire): Promise<string> {
  const lines: string[] = [];
  for (;;) {
    const line = await wire.line();
    lines.push(line);
    if (line[3] !== "-") return lines.join("\n");
  }
}

async function smtp(wire: Wire, command: string) {
  wire.write(command);
  return reply(wire);
}

/**
 * An SMTP session that authenticates with a SASL initial response; answers the final AUTH reply
 * (after an empty answer to the server's 334 error challenge, as XOAUTH2 clients send) and, when it
 * passed, sends a message to the sender itself.
 */
async function smtpSession({ tls, mechanism, initial, from, subject }: { tls: boolean; mechanism: string; initial: string; from: string; subject?: string }) {
  const wire = await Wire.open(tls ? lab.smtp_tls.port : lab.smtp.port, tls);
  try {
    await reply(wire);
    let ehlo = await smtp(wire, "EHLO oauth.test");
    if (!tls) {
      expect(ehlo).not.toContain("XOAUTH2");
      expect(await smtp(wire, "STARTTLS")).toMatch(/^220/);
      await wire.starttls();
      ehlo = await smtp(wire, "EHLO oauth.test");
    }
    expect(ehlo).toMatch(/AUTH PLAIN LOGIN XOAUTH2 OAUTHBEARER/);
    let auth = await smtp(wire, `AUTH ${mechanism} ${initial}`);
    if (auth.startsWith("334")) {
      // The server's reason, base64 JSON (RFC 7628): the client acknowledges it with an empty line.
      expect(JSON.parse(Buffer.from(auth.slice(4), "base64").toString())).toHaveProperty("status");
      auth = await smtp(wire, "");
    }
    if (!auth.startsWith("235") || !subject) return { auth };
    expect(await smtp(wire, `MAIL FROM:<${from}>`)).toMatch(/^250/);
    expect(await smtp(wire, `RCPT TO:<${from}>`)).toMatch(/^250/);
    expect(await smtp(wire, "DATA")).toMatch(/^354/);
    const queued = await smtp(wire, [`From: <${from}>`, `To: <${from}>`, `Subject: ${subject}`, `Date: ${new Date().toUTCString()}`, "", "Sent with a token.", "."].join("\r\n"));
    expect(queued).toMatch(/^250/);
    return { auth };
  } finally {
    wire.close();
  }
}

/** Logs in over IMAP (implicit TLS) with AUTHENTICATE and a SASL-IR initial response; runs `then` when it passed. */
async function imapSession(mechanism: string, initial: string, then?: (command: (text: string) => Promise<string[]>) => Promise<void>) {
  const wire = await Wire.open(lab.imap_tls.port, true);
  let tag = 0;
  const command = async (text: string) => {
    const id = `t${++tag}`;
    wire.write(`${id} ${text}`);
    const lines: string[] = [];
    for (;;) {
      const line = await wire.line();
      // A refused XOAUTH2 login first sends its reason as a continuation, answered with an empty line.
      if (line.startsWith("+ ")) {
        wire.write("");
        continue;
      }
      lines.push(line);
      if (line.startsWith(`${id} `)) return lines;
    }
  };
  try {
    await wire.line();
    const answer = (await command(`AUTHENTICATE ${mechanism} ${initial}`)).at(-1)!;
    if (answer.includes(" OK ") && then) await then(command);
    return answer;
  } finally {
    wire.close();
  }
}

/** An id token's claims (the lab's provider signs it; Salvo checks `iss` and `aud`). */
const claimsOf = (idToken: string) => JSON.parse(Buffer.from(idToken.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;

const OK_IMAP = /^t1 OK /;
const REFUSED_IMAP = /^t1 NO \[AUTHENTICATIONFAILED\]/;
const REFUSED_SMTP = /^535 5\.7\.8/;

describe("the lab's OAuth provider", () => {
  it("publishes its OpenID configuration, and its id tokens carry email, email_verified and name (tid for the Microsoft app)", async () => {
    const discovery = JSON.parse((await labRequest(lab, lab.oauth.discovery_url)).body);
    expect(discovery).toMatchObject({
      issuer: lab.oauth.issuer,
      authorization_endpoint: lab.oauth.authorize_url,
      token_endpoint: lab.oauth.token_url,
      revocation_endpoint: lab.oauth.revocation_url,
      introspection_endpoint: lab.oauth.introspection_url,
      jwks_uri: lab.oauth.jwks_url,
      code_challenge_methods_supported: ["S256"],
    });
    for (const provider of ["google", "microsoft"] as const) {
      const tokens = await labTokens(lab, provider, SENDER);
      const claims = claimsOf(tokens.id_token);
      expect(claims).toMatchObject({ iss: lab.oauth.issuer, aud: lab.oauth.clients[provider].client_id, email: SENDER, email_verified: true, name: "Sender 7" });
      expect(claims.tid).toBe(provider === "microsoft" ? lab.oauth.tenant_id : undefined);
      expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: ACCESS_TTL });
      expect(tokens.refresh_token).toEqual(expect.any(String));
    }
    const unverified = await labTokens(lab, "google", "unverified@lab.salvo.test");
    expect(claimsOf(unverified.id_token)).toMatchObject({ email_verified: false });
  });

  it("requires PKCE (S256), refuses a wrong verifier, and a wrong password never gets past its login page", async () => {
    const app = lab.oauth.clients.google;
    const withoutPkce = `${app.authorize_url}?${new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: "http://127.0.0.1/oauth/google/callback", scope: app.scope })}`;
    const refused = new URL(await consent(lab, withoutPkce, { email: SENDER }));
    expect(refused.searchParams.get("error")).toBe("invalid_request");

    const { challenge } = pkcePair();
    const redirectUri = "http://127.0.0.1:9/oauth/google/callback";
    const code = new URL(await consent(lab, authorizationUrl(lab, "google", { redirectUri, challenge }), { email: SENDER })).searchParams.get("code");
    const exchange = await tokenRequest(lab, "google", { grant_type: "authorization_code", code: code!, redirect_uri: redirectUri, code_verifier: pkcePair().verifier });
    expect(exchange).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    await expect(consent(lab, authorizationUrl(lab, "google", { challenge }), { email: SENDER, password: "wrong" })).rejects.toThrow(/answered 401/);
  });

  it("answers access_denied when the user presses Cancel, and leaves the mail scope out when the user unticks it", async () => {
    const denied = new URL(await consent(lab, authorizationUrl(lab, "google", { challenge: pkcePair().challenge }), { email: SENDER, allow: false }));
    expect(denied.searchParams.get("error")).toBe("access_denied");
    const withoutMail = await labTokens(lab, "google", SENDER, { mailScopes: [] });
    expect(withoutMail.scope ?? "").not.toContain("https://mail.google.com/");
    // Such a token opens no mailbox (Salvo reports scope_missing before it ever tries).
    expect((await smtpSession({ tls: true, mechanism: "XOAUTH2", initial: xoauth2(SENDER, withoutMail.access_token), from: SENDER })).auth).toMatch(REFUSED_SMTP);
    expect(await imapSession("XOAUTH2", xoauth2(SENDER, withoutMail.access_token))).toMatch(REFUSED_IMAP);
  });

  it("takes a person through sign-in and consent in Chromium, back to the app's loopback redirect URI on any port", async () => {
    const cert = new X509Certificate(readFileSync(join(dir, "lab", "tls", "server.pem")));
    const spki = createHash("sha256").update(cert.publicKey.export({ type: "spki", format: "der" })).digest("base64");
    let server: Server | undefined;
    const landed = new Promise<string>((resolve) => {
      server = createServer((request, response) => {
        response.end("connected");
        resolve(request.url ?? "");
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const redirectUri = `http://127.0.0.1:${(server!.address() as { port: number }).port}/oauth/microsoft/callback`;
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      headless: true,
      // Offline machine: no calls home. The lab's certificate is trusted by its key alone.
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", `--ignore-certificate-errors-spki-list=${spki}`],
    });
    try {
      const { verifier, challenge } = pkcePair();
      const page = await browser.newPage();
      await page.goto(authorizationUrl(lab, "microsoft", { redirectUri, challenge, loginHint: SENDER }));
      expect(await page.getByLabel("Email").inputValue()).toBe(SENDER);
      await page.getByLabel("Password").fill(lab.oauth.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Allow" }).waitFor();
      expect(await page.getByRole("checkbox").count()).toBe(2);
      await page.getByRole("button", { name: "Allow" }).click();
      const callback = new URL(await landed, redirectUri);
      const exchange = await tokenRequest(lab, "microsoft", { grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: redirectUri, code_verifier: verifier });
      expect(exchange.status).toBe(200);
      expect(await imapSession("XOAUTH2", xoauth2(SENDER, exchange.body.access_token!))).toMatch(OK_IMAP);
    } finally {
      await browser.close();
      server?.close();
    }
  });
});

describe("Dovecot and Postfix with the provider's tokens", () => {
  it("a Google token sends over SMTP (XOAUTH2, implicit TLS) and reads over IMAP; a Microsoft token does with STARTTLS and OAUTHBEARER", async () => {
    const subject = `oauth ${randomBytes(4).toString("hex")}`;
    const google = await labTokens(lab, "google", SENDER);
    expect((await smtpSession({ tls: true, mechanism: "XOAUTH2", initial: xoauth2(SENDER, google.access_token), from: SENDER, subject: `${subject} google` })).auth).toMatch(/^235/);
    const microsoft = await labTokens(lab, "microsoft", SENDER);
    const bearer = oauthbearer(SENDER, microsoft.access_token, "127.0.0.1", lab.smtp.port);
    expect((await smtpSession({ tls: false, mechanism: "OAUTHBEARER", initial: bearer, from: SENDER, subject: `${subject} microsoft` })).auth).toMatch(/^235/);
    expect((await smtpSession({ tls: false, mechanism: "XOAUTH2", initial: xoauth2(SENDER, microsoft.access_token), from: SENDER })).auth).toMatch(/^235/);

    const found: string[] = [];
    const answer = await imapSession("XOAUTH2", xoauth2(SENDER, google.access_token), async (command) => {
      await command("SELECT INBOX");
      for (let tries = 0; found.length < 2 && tries < 40; tries++) {
        found.splice(0, found.length, ...(await command(`SEARCH SUBJECT "${subject}"`)).filter((line) => line.startsWith("* SEARCH ")).flatMap((line) => line.slice(9).split(" ")));
        if (found.length < 2) await new Promise((resolve) => setTimeout(resolve, 250));
      }
    });
    expect(answer).toMatch(OK_IMAP);
    expect(found).toHaveLength(2);
    expect(await imapSession("OAUTHBEARER", oauthbearer(SENDER, microsoft.access_token, "127.0.0.1", lab.imap_tls.port))).toMatch(OK_IMAP);
  });

  it("refuses another mailbox's token, a made-up token, a refresh token and an expired token", async () => {
    const tokens = await labTokens(lab, "google", SENDER);
    const issued = Date.now();
    expect(await imapSession("XOAUTH2", xoauth2(SENDER, tokens.access_token))).toMatch(OK_IMAP);
    for (const initial of [xoauth2("lead5@lab.salvo.test", tokens.access_token), xoauth2(SENDER, "made-up-token"), xoauth2(SENDER, tokens.refresh_token)]) {
      expect((await smtpSession({ tls: true, mechanism: "XOAUTH2", initial, from: SENDER })).auth).toMatch(REFUSED_SMTP);
      expect(await imapSession("XOAUTH2", initial)).toMatch(REFUSED_IMAP);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, issued + (ACCESS_TTL + 1) * 1000 - Date.now())));
    expect(await imapSession("XOAUTH2", xoauth2(SENDER, tokens.access_token))).toMatch(REFUSED_IMAP);
    expect((await smtpSession({ tls: true, mechanism: "XOAUTH2", initial: xoauth2(SENDER, tokens.access_token), from: SENDER })).auth).toMatch(REFUSED_SMTP);
  }, 60_000);

  it("refreshes (Google's refresh token stays, Microsoft's rotates and the old one is refused); after revocation the refresh answers invalid_grant", async () => {
    const google = await labTokens(lab, "google", SENDER);
    const refreshed = await refreshTokens(lab, "google", google.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBe(google.refresh_token);
    expect(await imapSession("XOAUTH2", xoauth2(SENDER, refreshed.body.access_token!))).toMatch(OK_IMAP);

    const microsoft = await labTokens(lab, "microsoft", SENDER);
    const rotated = await refreshTokens(lab, "microsoft", microsoft.refresh_token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(microsoft.refresh_token);
    // Reusing a replaced refresh token is taken as theft: the whole grant goes (oidc-provider's rule, stricter than Microsoft's).
    expect(await refreshTokens(lab, "microsoft", microsoft.refresh_token)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await refreshTokens(lab, "microsoft", rotated.body.refresh_token!)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });

    // The admin call: as when the user removes the app from their account. Its live access token dies too.
    expect(await revokeGrants(lab, SENDER, lab.oauth.clients.google.client_id)).toBeGreaterThanOrEqual(1);
    expect(await refreshTokens(lab, "google", google.refresh_token)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    expect(await imapSession("XOAUTH2", xoauth2(SENDER, refreshed.body.access_token!))).toMatch(REFUSED_IMAP);

    // RFC 7009: the app revokes its own refresh token.
    const again = await labTokens(lab, "google", SENDER);
    const app = lab.oauth.clients.google;
    const revoked = await labRequest(lab, lab.oauth.revocation_url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: again.refresh_token, token_type_hint: "refresh_token", client_id: app.client_id, client_secret: app.client_secret }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect(await refreshTokens(lab, "google", again.refresh_token)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
  });

  it("password logins still work, and Dovecot's log names each login's mechanism", async () => {
    const password = started.config.mailboxes.find((m) => m.email === PASSWORD_USER)!.password;
    expect(await imapSession("PLAIN", Buffer.from(`\0${PASSWORD_USER}\0${password}`).toString("base64"))).toMatch(OK_IMAP);
    const tokens = await labTokens(lab, "microsoft", SENDER);
    expect((await smtpSession({ tls: false, mechanism: "XOAUTH2", initial: xoauth2(SENDER, tokens.access_token), from: SENDER })).auth).toMatch(/^235/);

    const log = readFileSync(lab.logs.dovecot, "utf8");
    const passed = (mechanism: string, user: string) => log.split("\n").filter((line) => line.includes(`: ${mechanism}(${user},`) && line.endsWith("Finished passdb lookup"));
    expect(passed("xoauth2", SENDER).length).toBeGreaterThanOrEqual(3);
    expect(passed("oauthbearer", SENDER).length).toBeGreaterThanOrEqual(2);
    expect([...passed("plain", SENDER), ...passed("login", SENDER)]).toEqual([]);
    expect(passed("plain", PASSWORD_USER)).toHaveLength(1);
    // IMAP logins also say so in imap-login's own line; refusals give their reason, never the token.
    expect(log).toContain(`Login: user=<${SENDER}>, method=XOAUTH2`);
    expect(log).toMatch(/xoauth2\(lead5@lab\.salvo\.test,127\.0\.0\.1[^)]*\): oauth2 failed: Introspection failed: Username 'lead5@lab\.salvo\.test' did not match/);
    expect(log).not.toContain(tokens.access_token);
  });
});
