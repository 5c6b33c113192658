import { readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import type { TestProject } from "vitest/node";
import type { MailLab } from "../../scripts/lib/mail-lab.mjs";

type Behaviour = "endlessLine" | "flood" | "drip";
type Ports = Record<Behaviour, number>;

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * Hostile mail servers on loopback (issue 23), each behaviour for SMTP and IMAP, plain and
     * implicit TLS (the lab's certificate, which the mail suite's runtime trusts):
     * `endlessLine` greets with a line that never ends; `flood` greets properly and answers the first
     * command with responses that never end (an endless multi-line SMTP reply, endless untagged IMAP
     * data); `drip` sends its greeting one byte every 100 ms, for ever. `stats` is an HTTP endpoint:
     * `GET <stats>/<protocol>-<security>-<behaviour>` answers `{ written, open }`, the bytes the last
     * such connection was sent and whether it is still open.
     */
    hostileMail: { smtp: Ports; smtpTls: Ports; imap: Ports; imapTls: Ports; stats: string };
  }
}

interface Stats {
  written: number;
  open: boolean;
}

const sockets = new Set<Socket>();
const stats = new Map<string, Stats>();

/** Writes `chunk` for as long as the client reads it, counting bytes, until it closes. */
function pump(socket: Socket, chunk: string, counter: Stats): void {
  const more = () => {
    while (counter.open && !socket.destroyed) {
      counter.written += chunk.length;
      if (!socket.write(chunk)) return void socket.once("drain", more);
    }
  };
  more();
}

function behave(protocol: "smtp" | "imap", behaviour: Behaviour, socket: Socket, counter: Stats): void {
  const greeting = protocol === "smtp" ? "220 hostile.test ESMTP\r\n" : "* OK hostile.test ready\r\n";
  if (behaviour === "endlessLine") return pump(socket, protocol === "smtp" ? "220 " + "x".repeat(65_532) : "* OK " + "x".repeat(65_531), counter);
  if (behaviour === "drip") {
    let at = 0;
    const timer = setInterval(() => {
      if (!counter.open || socket.destroyed) return clearInterval(timer);
      counter.written += 1;
      socket.write(greeting[at % (greeting.length - 2)]!);
      at += 1;
    }, 100);
    socket.on("close", () => clearInterval(timer));
    return;
  }
  socket.write(greeting);
  counter.written += greeting.length;
  socket.once("data", () => pump(socket, protocol === "smtp" ? "250-hostile.test says more\r\n".repeat(1_000) : "* 1 EXISTS\r\n".repeat(2_000), counter));
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

export default async function setup(project: TestProject) {
  const path = process.env.MAIL_LAB_JSON ?? join(import.meta.dirname, "..", "..", ".mail-lab.json");
  const lab = JSON.parse(readFileSync(path, "utf8")) as MailLab;
  const tls = dirname(lab.ca_file);
  const credentials = { cert: readFileSync(join(tls, "server.pem")), key: readFileSync(join(tls, "server-key.pem")) };
  const servers: Server[] = [];
  const serve = async (protocol: "smtp" | "imap", secure: boolean): Promise<Ports> => {
    const ports = {} as Ports;
    for (const behaviour of ["endlessLine", "flood", "drip"] as const) {
      const name = `${protocol}-${secure ? "tls" : "plain"}-${behaviour}`;
      const onSocket = (socket: Socket) => {
        const counter: Stats = { written: 0, open: true };
        stats.set(name, counter);
        sockets.add(socket);
        socket.on("error", () => {});
        socket.on("close", () => {
          counter.open = false;
          sockets.delete(socket);
        });
        behave(protocol, behaviour, socket, counter);
      };
      const server = secure ? createTlsServer(credentials, onSocket) : createTcpServer(onSocket);
      servers.push(server);
      ports[behaviour] = await listen(server);
    }
    return ports;
  };
  const statsServer = createHttpServer((request, response) => {
    const counter = stats.get((request.url ?? "").slice(1)) ?? null;
    response.writeHead(counter ? 200 : 404, { "Content-Type": "application/json" }).end(JSON.stringify(counter));
  });
  servers.push(statsServer);
  const statsPort = await listen(statsServer);
  project.provide("hostileMail", {
    smtp: await serve("smtp", false),
    smtpTls: await serve("smtp", true),
    imap: await serve("imap", false),
    imapTls: await serve("imap", true),
    stats: `http://127.0.0.1:${statsPort}`,
  });
  return async () => {
    for (const socket of sockets) socket.destroy();
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
