// A TCP relay that holds every chunk `oneWayMs` before passing it on, in both directions: the lab's
// submission port as if the server stood a round trip of 2 x oneWayMs away (bench-engine's one mailbox
// at a distance; the loopback's own round trip is a few hundredths of a millisecond, which no real
// mail server is). TLS passes through untouched. Order is kept: every chunk waits the same time, and
// Node runs timers of one duration in the order they were set.
import { connect, createServer } from "node:net";

/** Starts the relay on a free local port; answers the port and how to stop it (open connections cut). */
export function latencyProxy(target, oneWayMs) {
  const sockets = new Set();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      // The relay must not add Nagle's wait of its own on top of the delay it is asked for.
      socket.setNoDelay(true);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    relay(client, upstream, oneWayMs);
    relay(upstream, client, oneWayMs);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: server.address().port,
        close: () => {
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(done));
        },
      }),
    );
  });
}

function relay(from, to, oneWayMs) {
  from.on("data", (chunk) => setTimeout(() => to.write(chunk), oneWayMs));
  from.on("end", () => setTimeout(() => to.end(), oneWayMs));
}
