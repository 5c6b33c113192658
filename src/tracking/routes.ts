import { page } from "../platform/page";
import { Hono, type Context } from "hono";
import { config } from "../config";
import type { AppEnv } from "../platform/env";
import { loadKeyring } from "../platform/crypto";
import { log } from "../platform/logging";
import { classifyHit } from "./machine";
import { HITS_PER_MESSAGE, type TrackedEvent, type TrackingMessage } from "./queue-message";
import { recordTrackedEvents } from "./store";
import { verifyToken, type TrackKind, type TrackPayload } from "./tokens";
import { fromBase64 } from "../platform/bytes";
import { ApiError } from "../platform/errors";
import { MOVE_RETRY_SECONDS } from "../platform/moving";

/**
 * The links inside emails: open pixel, click redirect, unsubscribe. No API key and no cookies (the
 * token is the only credential), and not part of the API: they are left out of the OpenAPI
 * document, which describes what integrations call.
 */
export const trackingRoutes = new Hono<AppEnv>();

/** A transparent 1x1 GIF (43 bytes). */
const PIXEL = fromBase64("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")!;

const NO_STORE = { "Cache-Control": "no-store, no-cache, must-revalidate, private", Pragma: "no-cache" };

async function verified(c: Context<AppEnv>, token: string, kind: TrackKind): Promise<TrackPayload | null> {
  const payload = await verifyToken(await loadKeyring(config(c.env).secretsKey), token);
  return payload?.kind === kind ? payload : null;
}

/** Hits answered within this long of the first go to the queue as one message. */
const COALESCE_MS = 20;
/**
 * A queue message holds at most 128 KB, and a click carries its whole URL: a batch closes past this
 * many characters of JSON (three UTF-8 bytes at most each, short of the limit).
 */
const MAX_BATCH_CHARS = 40_000;

/** The batch still taking hits: flushed by the request that opened it, in its own waitUntil. */
let open: { hits: TrackedEvent[]; chars: number } | null = null;

/**
 * Opens and clicks go to the tracking queue after the answer: the reader's mail client or browser
 * never waits on D1, and a burst of opens after a large send is written in batches. A burst is also
 * sent as one queue message: a hit joins the batch another request of this isolate opened less than
 * COALESCE_MS ago, whose request sends it (one queue message for many hits, which Queues counts and
 * bills as one; nothing of the joining request is touched by the other). Should the queue refuse,
 * the hits are recorded directly instead.
 */
function recordInBackground(c: Context<AppEnv>, type: "OPEN" | "CLICK", payload: TrackPayload): void {
  const now = Date.now();
  const verdict = classifyHit({ method: c.req.method, userAgent: c.req.header("User-Agent") ?? null, now, sentAt: payload.sentAt });
  // On the request's own access log line: a second line per hit would double the tracking routes' logging (Apple's proxy alone fetches half the opens).
  if (verdict.machine) c.set("machineHit", verdict.reason);
  const event: TrackedEvent = { type, payload, occurredAt: now, isMachine: verdict.machine, eventId: `salvo-${type.toLowerCase()}:${crypto.randomUUID()}` };
  const chars = JSON.stringify(event).length;
  if (open && open.chars + chars <= MAX_BATCH_CHARS) {
    open.hits.push(event);
    open.chars += chars;
    if (open.hits.length >= HITS_PER_MESSAGE) open = null;
    return;
  }
  const batch = { hits: [event], chars };
  open = batch;
  const env = c.env;
  c.executionCtx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, COALESCE_MS))
      .then(() => {
        if (open === batch) open = null;
        return env.TRACKING_QUEUE.send(batch.hits satisfies TrackingMessage);
      })
      .catch(async () => {
        const refused = await recordTrackedEvents(env, batch.hits);
        if (refused.length > 0) throw new Error(`${refused.length} of them refused while their account moves`);
      })
      .catch((error: Error) => log("error", `tracking hits not recorded: ${error.message}`, { records: batch.hits.map((hit) => hit.payload.recordId) })),
  );
}

const NOT_FOUND_PAGE = page("Link not found", "<h1>Link not found</h1><p>This link is not valid. It may have been copied incompletely.</p>");

const UNSUBSCRIBED_PAGE = page("Unsubscribed", "<h1>You are unsubscribed</h1><p>You will receive no more emails from us.</p>");

/** Link scanners follow GETs, so the page only offers the POST that unsubscribes. */
function confirmPage(token: string): string {
  return page(
    "Unsubscribe",
    `<h1>Unsubscribe?</h1>
    <p>Confirm to stop receiving emails from this sequence.</p>
    <form method="post" action="/u/${token}">
      <input type="hidden" name="List-Unsubscribe" value="One-Click" />
      <button type="submit">Unsubscribe</button>
    </form>`,
  );
}

// The pixel answers the same whatever the token: a forged one learns nothing and records nothing.
trackingRoutes.get("/t/o/:file", async (c) => {
  const file = c.req.param("file");
  let payload: TrackPayload | null = null;
  try {
    payload = file.endsWith(".gif") ? await verified(c, file.slice(0, -".gif".length), "open") : null;
  } catch (error) {
    log("error", `open pixel not verified: ${(error as Error).message}`);
  }
  if (payload) recordInBackground(c, "OPEN", payload);
  return c.body(PIXEL, 200, { "Content-Type": "image/gif", ...NO_STORE });
});

trackingRoutes.get("/t/c/:token", async (c) => {
  const payload = await verified(c, c.req.param("token"), "click");
  if (!payload?.url) return c.html(NOT_FOUND_PAGE, 404, NO_STORE);
  recordInBackground(c, "CLICK", payload);
  // The URL as a browser would follow it: host in A-labels, the rest percent-encoded, tabs and line breaks
  // dropped (WHATWG URL), so Location is plain ASCII and can hold no second header.
  return new Response(null, { status: 302, headers: { Location: new URL(payload.url).href, ...NO_STORE } });
});

trackingRoutes.get("/u/:token", async (c) => {
  const payload = await verified(c, c.req.param("token"), "unsubscribe");
  if (!payload) return c.html(NOT_FOUND_PAGE, 404, NO_STORE);
  return c.html(confirmPage(c.req.param("token")), 200, NO_STORE);
});

// RFC 8058 one-click: mail clients POST `List-Unsubscribe=One-Click`; any body is accepted and
// none is read. The event's id is fixed per record, so a repeated POST records nothing more.
trackingRoutes.post("/u/:token", async (c) => {
  const payload = await verified(c, c.req.param("token"), "unsubscribe");
  if (!payload) return c.html(NOT_FOUND_PAGE, 404, NO_STORE);
  const refused = await recordTrackedEvents(c.env, [
    { type: "UNSUBSCRIBE", payload, occurredAt: Date.now(), isMachine: false, eventId: `salvo-unsubscribe-link:${payload.recordId}` },
  ]);
  if (refused.length > 0) throw ApiError.unavailable(MOVE_RETRY_SECONDS);
  return c.html(UNSUBSCRIBED_PAGE, 200, NO_STORE);
});
