/**
 * The header block of a seed's copy (CONTRACT 21.6): kept as it arrived, read back in order for the
 * email-headers report, and its first Received header (the seed provider's own hop) for rdns-details.
 * Pure.
 */

/** A kept header block holds at most this much (a hostile message cannot fill a row). */
export const MAX_HEADER_BYTES = 65_536;

/** The header block of a raw message (up to its first empty line), cut at MAX_HEADER_BYTES on a line's end. */
export function headerBlock(raw: Uint8Array): string {
  const text = new TextDecoder().decode(raw.subarray(0, MAX_HEADER_BYTES + 4));
  const end = text.search(/\r?\n\r?\n/);
  const block = end < 0 ? text : text.slice(0, end);
  if (block.length <= MAX_HEADER_BYTES) return block;
  const cut = block.lastIndexOf("\n", MAX_HEADER_BYTES);
  return block.slice(0, cut < 0 ? MAX_HEADER_BYTES : cut).replace(/\r$/, "");
}

/** The fields of a header block in received order, unfolded, each name as written. */
export function headerFields(block: string): { name: string; value: string }[] {
  const fields: { name: string; value: string }[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) {
      fields.at(-1)!.value += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    fields.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
  }
  return fields;
}

/** `{"<Name>": value}` in received order; a name that repeats (Received) maps to its values in order. */
export function headerObject(block: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const { name, value } of headerFields(block)) {
    const known = out[name];
    out[name] = known === undefined ? value : Array.isArray(known) ? [...known, value] : [known, value];
  }
  return out;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const IPV6 = /^[0-9a-f:.]*:[0-9a-f:.]*$/i;

/**
 * The connecting IP of the first Received header (from the top: the seed provider's own hops) that
 * names one, and the reverse name that header gives for it (`from helo (reverse [ip])`; `unknown`
 * means the receiver found none). A provider's internal hops without an IP (LMTP delivery) are
 * passed over. Either may be null.
 */
export function firstHop(block: string): { ip: string | null; reverse: string | null } {
  for (const received of headerFields(block).filter((field) => field.name.toLowerCase() === "received")) {
    const comment = /^from\s+\S+\s+\(([^)]*)\)/i.exec(received.value)?.[1] ?? "";
    const bracket = /\[(?:IPv6:)?([0-9a-f.:]+)\]/i.exec(comment) ?? /^from\s+\[(?:IPv6:)?([0-9a-f.:]+)\]/i.exec(received.value);
    if (!bracket || !(IPV4.test(bracket[1]!) || IPV6.test(bracket[1]!))) continue;
    const ip = bracket[1]!.toLowerCase();
    const name = /^([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)\.?\s+\[/i.exec(comment)?.[1]?.toLowerCase() ?? null;
    return { ip, reverse: name === null || name === "unknown" ? null : name };
  }
  return { ip: null, reverse: null };
}
