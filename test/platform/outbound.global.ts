import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The resolver's own address, for changing its records: `POST /records {name, a?, aaaa?, mx?, ptr?}`, `GET /queries/<name>`. */
    dnsControl: string;
    /** Base URL of the HTTP targets below (on 127.0.0.1). */
    outboundTarget: string;
  }
}

/**
 * A real DNS-over-HTTPS resolver (RFC 8484 wire format, GET `?dns=` and POST) on the port the config
 * chose (vitest.shared.ts `testResolverUrl`), standing in for the public DNS:
 * - `localtest.me` and its subdomains: 127.0.0.1 and ::1 (as the real one answers);
 * - `<a.b.c.d>.nip.io` and `<a-b-c-d>.nip.io` (with any labels before): that IPv4 address;
 * - `example.com`, `example.net`, `example.org` and their subdomains: a public address (TTL 300);
 * - names under `servfail.example`: SERVFAIL;
 * - names a test set through `POST /records` (TTL 0, so each lookup sees the latest): A, AAAA and MX
 *   (`mx: [{preference, exchange}]`, exchange "" for a null MX);
 * - anything else: NXDOMAIN.
 * `GET /queries/<name>` tells how many lookups a name got.
 *
 * And HTTP targets on another port: `/file/<token>` (200, a small text), `/big/<token>` (11 MiB with
 * no Content-Length), `/stall/<token>` (headers and a first chunk, then nothing), `/redirect/<token>?to=<url>`
 * (302 to it), `/verifier/<token>` (an external email verifier, below); `GET /requests/<token>` lists the paths asked with that token. `POST /listeners` opens
 * a TCP listener and answers its port; `GET /listeners/<port>` counts the connections it took.
 */
/**
 * The config's projects each inherit this global setup, and the resolver's port is fixed per process
 * (the Worker's bindings name it): so the servers start once and every project shares them, the last
 * one to finish closing them.
 */
interface Shared {
  started: Promise<{ dnsControl: string; outboundTarget: string; close: () => Promise<void> }>;
  users: number;
}
const SHARED = Symbol.for("salvo.outbound.global");
const registry = globalThis as unknown as { [SHARED]?: Shared };

export default async function setup(project: TestProject) {
  const shared = (registry[SHARED] ??= { started: start(), users: 0 });
  shared.users += 1;
  const { dnsControl, outboundTarget, close } = await shared.started;
  project.provide("dnsControl", dnsControl);
  project.provide("outboundTarget", outboundTarget);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete registry[SHARED];
    await close();
  };
}

async function start() {
  const port = Number(process.env.SALVO_TEST_DOH_PORT);
  if (!port) throw new Error("SALVO_TEST_DOH_PORT is unset: the config must call testResolverUrl()");
  type Mx = { preference: number; exchange: string };
  const set = new Map<string, { a: string[]; aaaa: string[]; mx: Mx[]; ptr?: string[] }>();
  const queries = new Map<string, number>();

  function answerFor(name: string): { rcode: number; a: string[]; aaaa: string[]; mx?: Mx[]; ptr?: string[]; ttl: number } {
    const chosen = set.get(name);
    if (chosen) return { rcode: 0, ...chosen, ttl: 0 };
    if (name === "localtest.me" || name.endsWith(".localtest.me")) return { rcode: 0, a: ["127.0.0.1"], aaaa: ["::1"], ttl: 300 };
    const nip = /(?:^|\.)(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})\.nip\.io$/.exec(name);
    if (nip) return { rcode: 0, a: [nip.slice(1).join(".")], aaaa: [], ttl: 300 };
    if (/(^|\.)example\.(com|net|org)$/.test(name)) return { rcode: 0, a: ["93.184.215.14"], aaaa: ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"], ttl: 300 };
    if (name.endsWith(".servfail.example")) return { rcode: 2, a: [], aaaa: [], ttl: 0 };
    return { rcode: 3, a: [], aaaa: [], ttl: 0 };
  }

  function ipv6Bytes(text: string): number[] {
    const [head, tail = ""] = text.split("::");
    const groups = (part: string) => (part ? part.split(":").map((group) => parseInt(group, 16)) : []);
    const before = groups(head!);
    const after = groups(tail);
    const all = text.includes("::") ? [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after] : before;
    return all.flatMap((group) => [group >> 8, group & 0xff]);
  }

  /** The answer to one query, as RFC 1035 lays it out: the question echoed, then the records asked for. */
  function respond(query: Buffer): Buffer {
    let at = 12;
    const labels: string[] = [];
    while (query[at]) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString("latin1"));
      at += 1 + query[at]!;
    }
    const questionEnd = at + 5;
    const type = query.readUInt16BE(at + 1);
    const name = labels.join(".").toLowerCase();
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const answer = answerFor(name);
    const mxBytes = (mx: Mx) => [mx.preference >> 8, mx.preference & 0xff, ...mx.exchange.split(".").filter(Boolean).flatMap((label) => [label.length, ...Buffer.from(label)]), 0];
    const records =
      answer.rcode !== 0
        ? []
        : type === 1
          ? answer.a.map((ip) => ip.split(".").map(Number))
          : type === 28
            ? answer.aaaa.map(ipv6Bytes)
            : type === 15
              ? (answer.mx ?? []).map(mxBytes)
              : type === 12
                ? (answer.ptr ?? []).map((target) => [...target.split(".").flatMap((label) => [label.length, ...Buffer.from(label, "latin1")]), 0])
                : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | answer.rcode, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((rdata) => {
      const record = Buffer.alloc(12 + rdata.length);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(answer.ttl, 6);
      record.writeUInt16BE(rdata.length, 10);
      Buffer.from(rdata).copy(record, 12);
      return record;
    });
    return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
  }

  async function bodyOf(request: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  const resolver = createHttpServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://resolver");
    const body = await bodyOf(request);
    if (url.pathname === "/dns-query") {
      const query = request.method === "POST" ? body : Buffer.from(url.searchParams.get("dns") ?? "", "base64url");
      if (query.length < 17) return response.writeHead(400).end();
      return response.writeHead(200, { "Content-Type": "application/dns-message" }).end(respond(query));
    }
    if (url.pathname === "/records" && request.method === "POST") {
      const record = JSON.parse(body.toString()) as { name: string; a?: string[]; aaaa?: string[]; mx?: Mx[]; ptr?: string[] };
      set.set(record.name.toLowerCase(), { a: record.a ?? [], aaaa: record.aaaa ?? [], mx: record.mx ?? [], ptr: record.ptr });
      return response.writeHead(204).end();
    }
    const asked = /^\/queries\/(.+)$/.exec(url.pathname);
    if (asked) return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(queries.get(asked[1]!.toLowerCase()) ?? 0));
    response.writeHead(404).end();
  });

  /**
   * An external email verifier (CONTRACT 22's wire shape) at `/verifier/<token>`: bearer `verifier-key`
   * or 401; by local part, `nobody` undeliverable, `anyone` deliverable on a catch-all domain, `maybe`
   * unknown, `down` a 503 for the whole call, anything else deliverable. `GET /requests/<token>` counts the calls.
   */
  async function verifier(request: IncomingMessage, response: ServerResponse) {
    const token = request.url!.split("/")[2] ?? "";
    requests.set(token, [...(requests.get(token) ?? []), `${request.method} /verifier/${token}`]);
    const body = JSON.parse((await bodyOf(request)).toString() || "{}") as { emails?: string[] };
    if (request.headers.authorization !== "Bearer verifier-key") return response.writeHead(401).end();
    const emails = body.emails ?? [];
    if (emails.some((email) => email.startsWith("down@"))) return response.writeHead(503).end();
    const results = emails.map((email) => {
      const local = email.slice(0, email.lastIndexOf("@"));
      if (local === "nobody") return { email, result: "undeliverable", catch_all: false };
      if (local === "anyone") return { email, result: "risky", catch_all: true };
      if (local === "maybe") return { email, result: "unknown", catch_all: null };
      return { email, result: "deliverable", catch_all: false };
    });
    return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ results }));
  }

  const requests = new Map<string, string[]>();
  const listeners = new Map<number, { server: Server; connections: number }>();
  const sockets = new Set<Socket>();
  const targets = createHttpServer(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith("/verifier/")) return verifier(request, response);
    request.resume();
    const url = new URL(request.url ?? "/", "http://target");
    const [, route = "", token = ""] = url.pathname.split("/");
    if (route === "requests") return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(requests.get(token) ?? []));
    if (route === "listeners" && request.method === "POST") {
      const server = createTcpServer((socket) => {
        entry.connections += 1;
        socket.destroy();
      });
      const entry = { server, connections: 0 };
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const listening = (server.address() as { port: number }).port;
      listeners.set(listening, entry);
      return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ port: listening }));
    }
    if (route === "listeners") return response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ connections: listeners.get(Number(token))?.connections ?? 0 }));
    requests.set(token, [...(requests.get(token) ?? []), `${request.method} ${url.pathname}`]);
    switch (route) {
      case "file":
        return response.writeHead(200, { "Content-Type": "text/plain" }).end("agenda: pricing, onboarding");
      case "big": {
        response.writeHead(200, { "Content-Type": "application/octet-stream" });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const more = () => {
          while (sent < 11 * 1024 * 1024) {
            sent += chunk.length;
            if (!response.write(chunk)) return void response.once("drain", more);
          }
          response.end();
        };
        response.on("error", () => {});
        return more();
      }
      case "stall":
        response.writeHead(200, { "Content-Type": "text/plain" });
        return void response.write("the first part, and then nothing");
      case "redirect":
        return response.writeHead(302, { Location: url.searchParams.get("to") ?? "/" }).end();
      default:
        return response.writeHead(404).end();
    }
  });
  targets.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => resolver.listen(port, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => targets.listen(0, "127.0.0.1", resolve));
  return {
    dnsControl: `http://127.0.0.1:${port}`,
    outboundTarget: `http://127.0.0.1:${(targets.address() as { port: number }).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      for (const { server } of listeners.values()) server.close();
      await Promise.all([new Promise<void>((resolve) => resolver.close(() => resolve())), new Promise<void>((resolve) => targets.close(() => resolve()))]);
    },
  };
}
