import type { SpamSymbol } from "../db/schema";

/** A spam filter's verdict on one message. */
export interface SpamVerdict {
  score: number;
  required: number | null;
  action: string | null;
  symbols: SpamSymbol[];
}

const TIMEOUT_MS = 10_000;

/**
 * Scores a message with Rspamd's HTTP API (`POST /checkv2`, the raw message as the body). The IP and
 * HELO of the hop that delivered it go along when known, so Rspamd's SPF and network rules judge the
 * sender rather than the checker. Symbols come back highest score first. A failure (no answer, not
 * JSON) is thrown: the caller keeps the placement and leaves the score empty.
 */
export async function scoreWithRspamd(baseUrl: string, raw: Uint8Array, hop: { ip: string | null; host: string | null }): Promise<SpamVerdict> {
  const headers: Record<string, string> = { "Content-Type": "message/rfc822" };
  if (hop.ip) headers.IP = hop.ip;
  if (hop.host) headers.Helo = hop.host;
  const response = await fetch(new URL("/checkv2", baseUrl), { method: "POST", headers, body: raw, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) throw new Error(`rspamd answered ${response.status}`);
  return verdictOf(await response.json());
}

/** Rspamd's /checkv2 answer reduced to score, required score, action and symbols. Pure. */
export function verdictOf(answer: unknown): SpamVerdict {
  const body = (answer ?? {}) as { score?: unknown; required_score?: unknown; action?: unknown; symbols?: unknown };
  if (typeof body.score !== "number") throw new Error("rspamd's answer has no score");
  const symbols = Object.entries((body.symbols ?? {}) as Record<string, { score?: unknown; description?: unknown }>).map(([name, symbol]) => ({
    name,
    score: typeof symbol.score === "number" ? symbol.score : 0,
    ...(typeof symbol.description === "string" && symbol.description ? { description: symbol.description } : {}),
  }));
  symbols.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  return {
    score: body.score,
    required: typeof body.required_score === "number" ? body.required_score : null,
    action: typeof body.action === "string" ? body.action : null,
    symbols,
  };
}
