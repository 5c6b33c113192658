import { createHash, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { chromium } from "playwright-core";
import type { TestProject } from "vitest/node";
import { consent } from "../../scripts/lib/lab-oauth-client.mjs";
import { LabImap, quote, type MailLab } from "../../scripts/lib/mail-lab.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** The running lab's `.mail-lab.json`. */
    mailLab: MailLab;
    /**
     * A Node-side reader of lab mailboxes over IMAP (implicit TLS, trusting only the lab's CA):
     * `GET /message?user=<email>&message_id=<Message-ID>` answers the raw message once it is in the
     * user's INBOX (polled for up to 10 s), or 404. `GET /log?name=dovecot` (or postfix, oauth) answers
     * that daemon's log as it stands.
     */
    mailReader: string;
    /**
     * Scripted SMTP servers on loopback (plain) for answers the lab never gives: `transient` greets and
     * accepts MAIL FROM but answers RCPT with 451 4.3.0; `hangup` greets and closes the connection;
     * `silent` accepts the connection and never says anything; `lostAfterData` and `silentAfterData`
     * take a whole transaction up to the end of the message, then close without answering it, or
     * never answer it. `recorder` keeps each session's commands (`GET <mailReader>/smtp-sessions?helo=<name>`
     * answers them as `[[command, …], …]`, one array per session that said `EHLO <name>`) and answers
     * by the sender's and recipient's local parts: sender `refused…` 553 at MAIL (and 503 to the RCPT
     * after it), sender `closing…` one message a session (421 to a later MAIL FROM on it and to every
     * command after, as a server capping messages a connection), recipient `reject…` 550 at RCPT,
     * `busy…` 451 at RCPT, `lost…` (the first RCPT) closes at the end of the message without
     * answering it, `bye…` takes the message and then closes the session, anything else is taken; a session whose EHLO
     * name starts with `idle` is ended (421) 200 ms after its login if it has not begun a transaction;
     * DATA with no recipient taken is 554, as Postfix answers. It offers PIPELINING (the other
     * scripted servers do not).
     */
    scriptedSmtp: { transient: number; hangup: number; silent: number; lostAfterData: number; silentAfterData: number; recorder: number };
    /**
     * Scripted IMAP servers on loopback (plain): `noStarttls` offers no STARTTLS but accepts any LOGIN
     * (so a client that went on in clear would pass); `bye` greets, then answers any command with an
     * untagged BYE and closes.
     */
    scriptedImap: { noStarttls: number; bye: number };
    /**
     * A person at the lab's OAuth provider, for tests in the Workers runtime (which cannot run a
     * browser): `POST <labConsent>` with JSON `{"auth_url", "email", "allow"?, "mail_scopes"?}`
     * follows the authorization URL through the provider's login and consent pages as that lab user
     * (`allow: false` presses Cancel; `mail_scopes` lists the mail scopes left ticked, all when
     * absent) and answers `{"redirect": "<redirect_uri>?code=…&state=…"}` (or `?error=…`), the URL
     * the browser would be sent to; 400 with the reason when the pages refuse.
     */
    labConsent: string;
  }
}

const TIMEOUT_MS = 10_000;

async function readMessage(lab: MailLab, ca: Buffer, user: string, messageId: string): Promise<string | null> {
  const imap = await LabImap.login(lab, user, ca);
  try {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      await imap.command("EXAMINE INBOX");
      const { lines } = await imap.command(`UID SEARCH HEADER Message-ID ${quote(messageId)}`);
      const uid = lines.map((line) => /^\* SEARCH (\d+)/.exec(line)?.[1]).find(Boolean);
      if (uid) {
        const { literals } = await imap.command(`UID FETCH ${uid} BODY.PEEK[]`);
        return literals[0] ?? null;
      }
      if (Date.now() > deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    imap.close();
  }
}

/**
 * The person's part in Chromium: the provider's sign-in and consent pages as a browser shows them,
 * up to the redirect to the app's callback, which is caught rather than followed (the app under test
 * runs in the Workers runtime, not behind a URL this browser could reach).
 */
async function consentInChromium(lab: MailLab, authUrl: string, email: string): Promise<string> {
  const cert = new X509Certificate(readFileSync(join(dirname(lab.ca_file), "server.pem")));
  const spki = createHash("sha256").update(cert.publicKey.export({ type: "spki", format: "der" })).digest("base64");
  const redirectUri = new URL(authUrl).searchParams.get("redirect_uri")!;
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", `--ignore-certificate-errors-spki-list=${spki}`],
  });
  try {
    const page = await browser.newPage();
    let landed: (url: string) => void;
    const redirected = new Promise<string>((resolve) => (landed = resolve));
    await page.route(`${redirectUri}**`, async (route) => {
      landed(route.request().url());
      await route.fulfill({ status: 200, body: "caught" });
    });
    await page.goto(authUrl);
    const address = page.getByLabel("Email");
    if ((await address.inputValue()) === "") await address.fill(email);
    await page.getByLabel("Password").fill(lab.oauth.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    return await redirected;
  } finally {
    await browser.close();
  }
}

/** A plain SMTP server on a free loopback port, its dialogue given by onConnect. */
/** Every socket a test server accepted, so teardown can end them (a pooled or silent one never ends by itself). */
const sockets = new Set<Socket>();

function scriptedServer(onConnect: (socket: Socket) => void): Promise<Server> {
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    onConnect(socket);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function transientServer() {
  return scriptedServer((socket) => {
    socket.write("220 scripted.test ESMTP\r\n");
    let buffer = "";
    socket.on("data", (chunk) => {
      buffer += chunk.toString("latin1");
      let index: number;
      while ((index = buffer.indexOf("\r\n")) >= 0) {
        const command = buffer.slice(0, index).toUpperCase();
        buffer = buffer.slice(index + 2);
        if (command.startsWith("EHLO")) socket.write("250-scripted.test\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n");
        else if (command.startsWith("AUTH")) socket.write("235 2.7.0 Authentication successful\r\n");
        else if (command.startsWith("MAIL")) socket.write("250 2.1.0 Ok\r\n");
        else if (command.startsWith("RCPT")) socket.write("451 4.3.0 Try again later: mailbox busy\r\n");
        else if (command.startsWith("QUIT")) socket.end("221 2.0.0 Bye\r\n");
        else socket.write("250 2.0.0 Ok\r\n");
      }
    });
    socket.on("error", () => {});
  });
}

function hangupServer() {
  return scriptedServer((socket) => {
    socket.on("error", () => {});
    socket.end("220 scripted.test ESMTP\r\n");
  });
}

/** Calls `onLine` with each CRLF-ended line a client sends. */
function lineServer(greeting: string, onLine: (socket: Socket, line: string) => void) {
  return scriptedServer((socket) => {
    socket.on("error", () => {});
    socket.write(greeting);
    let buffer = "";
    socket.on("data", (chunk) => {
      buffer += chunk.toString("latin1");
      let index: number;
      while ((index = buffer.indexOf("\r\n")) >= 0) {
        const line = buffer.slice(0, index);
        buffer = buffer.slice(index + 2);
        onLine(socket, line);
      }
    });
  });
}

function noStarttlsImapServer() {
  return lineServer("* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] scripted.test ready\r\n", (socket, line) => {
    const [tag, command = ""] = line.split(" ");
    switch (command.toUpperCase()) {
      case "CAPABILITY":
        return socket.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK done\r\n`);
      case "LOGIN":
        return socket.write(`${tag} OK logged in\r\n`);
      case "SELECT":
        return socket.write(`* 0 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n${tag} OK [READ-WRITE] selected\r\n`);
      case "LOGOUT":
        return socket.end(`* BYE see you\r\n${tag} OK done\r\n`);
      default:
        return socket.write(`${tag} BAD unknown command\r\n`);
    }
  });
}

function byeImapServer() {
  return lineServer("* OK scripted.test ready\r\n", (socket) => socket.end("* BYE [UNAVAILABLE] Server shutting down\r\n"));
}

function silentServer() {
  return scriptedServer((socket) => socket.on("error", () => {}));
}

/** Takes a whole SMTP transaction, then at the end of the message closes (`close`) or says nothing. */
function afterDataServer(atEnd: "close" | "silence") {
  const inData = new WeakSet<Socket>();
  return lineServer("220 scripted.test ESMTP\r\n", (socket, line) => {
    if (inData.has(socket)) {
      if (line !== ".") return;
      inData.delete(socket);
      if (atEnd === "close") socket.destroy();
      return;
    }
    const command = line.toUpperCase();
    if (command.startsWith("EHLO")) socket.write("250-scripted.test\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n");
    else if (command.startsWith("AUTH")) socket.write("235 2.7.0 Authentication successful\r\n");
    else if (command === "DATA") {
      inData.add(socket);
      socket.write("354 End data with <CR><LF>.<CR><LF>\r\n");
    } else if (command.startsWith("QUIT")) socket.end("221 2.0.0 Bye\r\n");
    else socket.write("250 2.0.0 Ok\r\n");
  });
}

/** Every session of the recording server, by the name it gave in EHLO: the commands it sent, in order. */
const recorded = new Map<string, string[][]>();

function recorderServer() {
  const sessions = new WeakMap<Socket, { commands: string[]; recipient: string; accepted: number; inData: boolean; mailRefused: boolean; taken: number; closing: boolean }>();
  return lineServer("220 recorder.test ESMTP\r\n", (socket, line) => {
    let session = sessions.get(socket);
    if (!session) sessions.set(socket, (session = { commands: [], recipient: "", accepted: 0, inData: false, mailRefused: false, taken: 0, closing: false }));
    if (session.inData) {
      // "<message>" from the first line of content on, so content after a refused transaction shows.
      if (session.commands.at(-1) !== "<message>") session.commands.push("<message>");
      if (line !== ".") return;
      session.inData = false;
      if (session.recipient.startsWith("lost")) return void socket.destroy();
      session.taken += 1;
      socket.write("250 2.0.0 Ok: queued\r\n");
      if (session.recipient.startsWith("bye")) socket.end();
      return;
    }
    const command = line.toUpperCase();
    session.commands.push(command.startsWith("AUTH") ? "AUTH" : command.startsWith("EHLO") ? line : command.split(":")[0]!);
    if (command.startsWith("MAIL") && /<closing/i.test(line) && session.taken > 0) session.closing = true;
    if (session.closing) return void socket.write("421 4.7.0 recorder.test Error: too many messages in this session, closing\r\n");
    if (command.startsWith("EHLO")) {
      const name = line.slice(5);
      if (session.commands.length === 1) recorded.set(name, [...(recorded.get(name) ?? []), session.commands]);
      socket.write("250-recorder.test\r\n250-PIPELINING\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n");
    } else if (command.startsWith("AUTH")) {
      socket.write("235 2.7.0 Authentication successful\r\n");
      // A session named `idle…` is ended by the server 200 ms after its login unless a transaction began (an idle timeout).
      if (/^EHLO idle/i.test(session.commands[0] ?? "")) setTimeout(() => session.commands.length === 2 && socket.end("421 4.4.2 recorder.test Error: timeout exceeded\r\n"), 200);
    }
    else if (command.startsWith("MAIL")) {
      Object.assign(session, { recipient: "", accepted: 0 });
      session.mailRefused = /<refused/i.test(line);
      socket.write(session.mailRefused ? "553 5.7.1 <refused@lab.salvo.test>: Sender address rejected: not owned by user\r\n" : "250 2.1.0 Ok\r\n");
    } else if (command.startsWith("RCPT") && session.mailRefused) socket.write("503 5.5.1 Error: need MAIL command\r\n");
    else if (command.startsWith("RCPT")) {
      const recipient = /<([^@>]*)/.exec(line)?.[1]?.toLowerCase() ?? "";
      session.recipient ||= recipient;
      if (recipient.startsWith("reject")) socket.write("550 5.1.1 <" + recipient + ">: Recipient address rejected: User unknown\r\n");
      else if (recipient.startsWith("busy")) socket.write("451 4.3.0 Try again later: mailbox busy\r\n");
      else {
        session.accepted += 1;
        socket.write("250 2.1.5 Ok\r\n");
      }
    } else if (command === "DATA" && session.accepted === 0) socket.write("554 5.5.1 Error: no valid recipients\r\n");
    else if (command === "DATA") {
      session.inData = true;
      socket.write("354 End data with <CR><LF>.<CR><LF>\r\n");
    } else if (command.startsWith("QUIT")) socket.end("221 2.0.0 Bye\r\n");
    else socket.write("250 2.0.0 Ok\r\n");
  });
}

export default async function setup(project: TestProject) {
  const path = process.env.MAIL_LAB_JSON ?? join(import.meta.dirname, "..", "..", ".mail-lab.json");
  let lab: MailLab;
  try {
    lab = JSON.parse(readFileSync(path, "utf8")) as MailLab;
  } catch {
    throw new Error(`no running mail lab (${path}): run these tests with \`npm run test:mail\``);
  }
  const ca = readFileSync(lab.ca_file);

  const reader = createHttpServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://reader");
    if (url.pathname === "/smtp-sessions") {
      return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(recorded.get(url.searchParams.get("helo") ?? "") ?? []));
    }
    if (url.pathname === "/log") {
      const name = url.searchParams.get("name") as keyof MailLab["logs"];
      const file = lab.logs[name];
      if (!file) return response.writeHead(404).end();
      return response.writeHead(200).end(readFileSync(file));
    }
    const user = url.searchParams.get("user") ?? "";
    const messageId = url.searchParams.get("message_id") ?? "";
    readMessage(lab, ca, user, messageId).then(
      (raw) => (raw === null ? response.writeHead(404).end() : response.writeHead(200).end(raw)),
      (error: Error) => response.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((resolve) => reader.listen(0, "127.0.0.1", resolve));
  const person = createHttpServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk));
    request.on("end", () => {
      type Asked = { auth_url: string; email: string; allow?: boolean; mail_scopes?: string[]; browser?: boolean };
      Promise.resolve()
        .then(() => JSON.parse(body) as Asked)
        .then((asked) =>
          asked.browser
            ? consentInChromium(lab, asked.auth_url, asked.email)
            : consent(lab, asked.auth_url, { email: asked.email, allow: asked.allow, mailScopes: asked.mail_scopes }),
        )
        .then(
          (redirect) => response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ redirect })),
          (error: Error) => response.writeHead(400).end(error.message),
        );
    });
  });
  await new Promise<void>((resolve) => person.listen(0, "127.0.0.1", resolve));
  const transient = await transientServer();
  const hangup = await hangupServer();
  const silent = await silentServer();
  const lostAfterData = await afterDataServer("close");
  const silentAfterData = await afterDataServer("silence");
  const recorder = await recorderServer();
  const noStarttls = await noStarttlsImapServer();
  const bye = await byeImapServer();
  const portOf = (server: { address(): unknown }) => (server.address() as { port: number }).port;

  project.provide("mailLab", lab);
  project.provide("mailReader", `http://127.0.0.1:${portOf(reader)}`);
  project.provide("scriptedSmtp", {
    transient: portOf(transient),
    hangup: portOf(hangup),
    silent: portOf(silent),
    lostAfterData: portOf(lostAfterData),
    silentAfterData: portOf(silentAfterData),
    recorder: portOf(recorder),
  });
  project.provide("scriptedImap", { noStarttls: portOf(noStarttls), bye: portOf(bye) });
  project.provide("labConsent", `http://127.0.0.1:${portOf(person)}`);
  for (const server of [reader, person]) {
    server.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
  }
  return async () => {
    for (const socket of sockets) socket.destroy();
    for (const server of [reader, person, transient, hangup, silent, lostAfterData, silentAfterData, recorder, noStarttls, bye]) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  };
}
