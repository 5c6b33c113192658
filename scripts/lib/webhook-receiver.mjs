// A tiny webhook receiver that checks Standard Webhooks signatures: used by scripts/webhook-sink.mjs
// (a terminal you watch) and by the webhooks benchmark (which times arrivals).
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

export function verifySignature(secret, headers, body) {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers["webhook-signature"] ?? "")
    .split(" ")
    .some((candidate) => {
      const [version, mac] = candidate.split(",");
      const given = Buffer.from(mac ?? "", "base64");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * Listens on 127.0.0.1:`port` (0 = any free port); `onDelivery({ headers, payload, verified })`
 * runs for each POST. `secret` may be a function, so it can be learnt after the server starts.
 */
export function startReceiver({ port = 0, secret, onDelivery }) {
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const key = typeof secret === "function" ? secret() : secret;
      const verified = key ? verifySignature(key, request.headers, body) : null;
      let payload;
      try {
        payload = JSON.parse(body);
      } catch {
        payload = body;
      }
      onDelivery({ headers: request.headers, payload, verified });
      response.writeHead(200, { "Content-Type": "application/json" }).end('{"ok":true}');
    });
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => resolve({ port: server.address().port, close: () => server.close() }));
  });
}
