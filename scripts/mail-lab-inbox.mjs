// `npm run mail-lab:inbox -- <address> [--show N]`: what a lab mailbox received, read over IMAP with
// TLS trusting only the lab's CA. Lists INBOX then Junk (date, from, subject, Message-ID, and when
// present the message a follow-up answers and the unsubscribe link), numbered; `--show N` prints
// message N raw. Read-only (EXAMINE): nothing is marked seen.
import { TextDecoder } from "node:util";
import { LabImap, runningLab } from "./lib/mail-lab.mjs";

const FOLDERS = ["INBOX", "Junk"];
const USAGE = "usage: npm run mail-lab:inbox -- <address, e.g. lead1@lab.salvo.test or lead1> [--show N]";

function fail(message) {
  console.error(`mail-lab:inbox: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
const showAt = args.indexOf("--show");
const show = showAt >= 0 ? Number(args[showAt + 1]) : null;
const address = args.filter((_arg, index) => showAt < 0 || (index !== showAt && index !== showAt + 1))[0];
if (!address || (show !== null && !(Number.isInteger(show) && show > 0))) fail(USAGE);

const lab = runningLab();
if (!lab) fail("no mail lab is running: start it with `npm run mail-lab` (in another terminal).");

// lead1+anything@ is delivered to lead1 (plus-addressing); a bare local part means the lab's domain.
const email = (address.includes("@") ? address : `${address}@lab.salvo.test`).toLowerCase().replace(/\+[^@]*@/, "@");
if (!lab.mailboxes.some((m) => m.email === email)) {
  fail(`${email} is not a lab mailbox; the lab has ${lab.mailboxes.map((m) => m.email.split("@")[0]).join(", ")}.`);
}

/** Unfolded header fields of a header block, by lower-case name. */
function headers(block) {
  const fields = new Map();
  for (const line of block.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return fields;
}

/** RFC 2047 encoded-words (B and Q) decoded for display. */
function decodeWords(value) {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_word, charset, encoding, text) => {
      const bytes =
        encoding.toUpperCase() === "B"
          ? Buffer.from(text, "base64")
          : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9A-Fa-f]{2})/g, (_m, hex) => String.fromCharCode(parseInt(hex, 16))), "latin1");
      try {
        return new TextDecoder(charset).decode(bytes);
      } catch {
        return bytes.toString("latin1");
      }
    });
}

/** The folder's messages, oldest first: uid, arrival date and header fields. */
async function list(imap, folder) {
  const { lines } = await imap.command(`EXAMINE ${folder}`);
  const exists = Number(lines.map((line) => /^\* (\d+) EXISTS/.exec(line)?.[1]).find(Boolean) ?? 0);
  if (exists === 0) return [];
  const fetched = await imap.command("UID FETCH 1:* (UID INTERNALDATE BODY.PEEK[HEADER.FIELDS (DATE FROM SUBJECT MESSAGE-ID IN-REPLY-TO LIST-UNSUBSCRIBE)])");
  return fetched.literals.map((literal, index) => {
    const line = fetched.lines[fetched.literalAfter[index]];
    return {
      folder,
      uid: /UID (\d+)/.exec(line)?.[1],
      arrived: /INTERNALDATE "([^"]+)"/.exec(line)?.[1],
      fields: headers(literal),
    };
  });
}

let imap;
try {
  imap = await LabImap.login(lab, email);
} catch (error) {
  fail(`could not read ${email} over IMAP (${lab.imap_tls.host}:${lab.imap_tls.port}): ${error.message}`);
}
try {
  const messages = [];
  for (const folder of FOLDERS) messages.push(...(await list(imap, folder)));
  if (show !== null) {
    const message = messages[show - 1];
    if (!message) fail(`${email} has ${messages.length} message(s); there is no message ${show}.`);
    await imap.command(`EXAMINE ${message.folder}`);
    const { literals } = await imap.command(`UID FETCH ${message.uid} BODY.PEEK[]`);
    process.stdout.write(literals[0] ?? "");
  } else {
    console.log(`${email}: ${messages.length} message(s)`);
    let folder = null;
    for (const [index, message] of messages.entries()) {
      if (message.folder !== folder) {
        folder = message.folder;
        console.log(`\n${folder}`);
      }
      const field = (name) => decodeWords(message.fields.get(name) ?? "");
      console.log(`${String(index + 1).padStart(3)}  ${field("date") || message.arrived}`);
      console.log(`     From:       ${field("from")}`);
      console.log(`     Subject:    ${field("subject")}`);
      console.log(`     Message-ID: ${field("message-id")}`);
      if (message.fields.has("in-reply-to")) console.log(`     In-Reply-To: ${field("in-reply-to")}`);
      if (message.fields.has("list-unsubscribe")) console.log(`     List-Unsubscribe: ${field("list-unsubscribe")}`);
    }
    for (const empty of FOLDERS.filter((f) => !messages.some((m) => m.folder === f))) console.log(`\n${empty}: empty`);
  }
} finally {
  imap.close();
}
