// `GET /?calls=N&kind=K`: N round trips of one kind, one after the other (scripts/bench-floors.mjs).
/* global URL, Response */
import { DurableObject } from "cloudflare:workers";

export class Probe extends DurableObject {
  ping() {
    return 1;
  }
}

const KINDS = {
  none: () => Promise.resolve(),
  select: (db) => db.prepare("SELECT 1 AS one").all(),
  insert: (db) => db.prepare("INSERT INTO rows (value) VALUES (?)").bind("x".repeat(64)).run(),
  object: (_db, env) => env.PROBE.get(env.PROBE.idFromName("probe")).ping(),
  batch8: (db) => db.batch(Array.from({ length: 8 }, () => db.prepare("INSERT INTO rows (value) VALUES (?)").bind("x".repeat(64)))),
};

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const call = KINDS[url.searchParams.get("kind") ?? ""];
    if (!call) return new Response("unknown kind", { status: 400 });
    await env.DB.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, value TEXT)");
    for (let n = Number(url.searchParams.get("calls") ?? 1); n > 0; n -= 1) await call(env.DB, env);
    return new Response("ok");
  },
};
