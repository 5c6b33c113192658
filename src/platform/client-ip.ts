import type { Config } from "../config";

/**
 * The caller's address as the trusted header (`CLIENT_IP_HEADER`, default `CF-Connecting-IP`) gives
 * it. Cloudflare sets CF-Connecting-IP itself, so on Workers it cannot be forged; a self-hosted
 * runtime trusts whatever the header says, so name the header your proxy sets (and strips from
 * callers). A list (`X-Forwarded-For`) gives its last entry: the one the nearest proxy added.
 * Undefined without the header: such callers share one failed-authentication bucket.
 */
export function clientIp(req: { header(name: string): string | undefined }, settings: Config): string | undefined {
  return req.header(settings.clientIpHeader)?.split(",").at(-1)?.trim() || undefined;
}

/**
 * The bucket failed authentications are counted in: an IPv4 address on its own, an IPv6 address
 * by its /64 (one subscriber's prefix: a host picks any of its 2^64 addresses at will, so a
 * per-address budget would be no budget). IPv4-mapped IPv6 counts as the IPv4 address.
 */
export function failureBucket(ip: string): string {
  if (!ip.includes(":")) return ip;
  const groups = ipv6Groups(ip);
  if (!groups) return ip.toLowerCase();
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
export function ipv6Groups(ip: string): number[] | null {
  let text = ip.split("%")[0]!.toLowerCase();
  const v4 = /(^|:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const octets = v4.slice(2).map(Number);
    if (octets.some((o) => o > 255)) return null;
    const tail = `${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
    text = text.slice(0, text.length - v4[0].length + v4[1]!.length) + tail;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const parts = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!parts.every((part) => /^[0-9a-f]{1,4}$/.test(part))) return null;
  return parts.map((part) => parseInt(part, 16));
}
