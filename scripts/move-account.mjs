// `npm run move -- <account id> <shard>`: the operator command that moves an account to another shard
// (issue 30; src/moves/). It calls `POST /admin/v1/accounts/{id}/move` until the move is done, printing
// where it stands after each call; a move it leaves (Ctrl-C, a lost connection) goes on from the minute
// cron, or from the next run of this command. SALVO_URL (default http://localhost:8787, `npm run dev`)
// and ADMIN_TOKEN (default: the one in .dev.vars) say where and as whom.
import { adminToken } from "./lib/dev-server.mjs";

const [account, shard] = process.argv.slice(2).map(Number);
if (!Number.isSafeInteger(account) || !Number.isSafeInteger(shard)) {
  console.error("usage: npm run move -- <account id> <shard>");
  process.exit(2);
}
const url = new URL(`/admin/v1/accounts/${account}/move`, process.env.SALVO_URL ?? "http://localhost:8787");
const token = process.env.ADMIN_TOKEN ?? adminToken();

let last = "";
for (;;) {
  const response = await fetch(url, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: JSON.stringify({ shard }) });
  const body = await response.json();
  if (!response.ok) {
    console.error(`${response.status}: ${body.error ?? JSON.stringify(body)}`);
    process.exit(1);
  }
  console.log(`${new Date().toISOString()} ${body.state}: ${body.copied_rows} rows copied, ${body.deleted_rows} deleted from shard ${body.from_shard}`);
  if (body.state === "done") break;
  // Unchanged: another worker (the minute cron) holds the move's lease for now.
  const seen = JSON.stringify([body.state, body.copied_rows, body.deleted_rows]);
  if (seen === last) await new Promise((resolve) => setTimeout(resolve, 2_000));
  last = seen;
  if (body.state === "failed") {
    console.error(`undone: ${body.error}`);
    process.exit(1);
  }
}
