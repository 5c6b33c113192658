import { describe, expect, inject, it } from "vitest";
import { dnsQuery, lookupAddresses, parseDnsAnswer, AAAA, DnsError } from "../../src/platform/dns";
import { checkHost, checkUrl, connectRefusal, guardedFetch, hostProblem, OutboundError, parseHost, urlProblem, type OutboundPolicy } from "../../src/platform/outbound";
import { fileEnv } from "../helpers";

const dns = inject("dnsControl");
const target = inject("outboundTarget");
const resolverUrl = fileEnv().DNS_RESOLVER_URL!;

const spelling: OutboundPolicy = { local: "none", resolverUrl: null, ownHosts: ["salvo.test"] };
const production: OutboundPolicy = { ...spelling, resolverUrl };
const loopback: OutboundPolicy = { ...production, local: "loopback" };
const anyLocal: OutboundPolicy = { ...production, local: "private" };

/** Why a host written in a field is refused by spelling alone, or null. */
function judged(value: string, policy = spelling): string | null {
  const host = parseHost(value);
  if (!host) return "not a host";
  return hostProblem(host, policy);
}

describe("the outbound rule by spelling (src/platform/outbound.ts)", () => {
  it("reads IPv4 in every spelling the URL parser reads, and judges what it reaches", () => {
    for (const [written, reason] of [
      ["127.0.0.1", "127.0.0.1 is a loopback address"],
      ["127.1", "127.0.0.1 is a loopback address"],
      ["2130706433", "127.0.0.1 is a loopback address"],
      ["0x7f.1", "127.0.0.1 is a loopback address"],
      ["0177.0.0.1", "127.0.0.1 is a loopback address"],
      ["0x7f000001", "127.0.0.1 is a loopback address"],
      ["017700000001", "127.0.0.1 is a loopback address"],
      ["10.0.0.1", "10.0.0.1 is a private address"],
      ["172.31.255.255", "172.31.255.255 is a private address"],
      ["192.168.0.10", "192.168.0.10 is a private address"],
      ["169.254.169.254", "169.254.169.254 is a link-local address (cloud metadata services answer there)"],
      ["100.64.0.1", "100.64.0.1 is a carrier-grade NAT address"],
      ["0.0.0.0", "0.0.0.0 is a “this network” address"],
      ["0", "0.0.0.0 is a “this network” address"],
      ["224.0.0.1", "224.0.0.1 is a multicast address"],
      ["255.255.255.255", "255.255.255.255 is the broadcast address"],
      ["240.0.0.1", "240.0.0.1 is a reserved address"],
      ["192.0.2.1", "192.0.2.1 is a documentation address"],
      ["198.51.100.7", "198.51.100.7 is a documentation address"],
      ["203.0.113.9", "203.0.113.9 is a documentation address"],
      ["198.18.0.1", "198.18.0.1 is a benchmarking address"],
      ["192.0.0.8", "192.0.0.8 is an IETF protocol address"],
      ["192.88.99.1", "192.88.99.1 is a 6to4 relay address"],
    ] as const) {
      expect(judged(written), written).toBe(reason);
    }
    for (const fine of ["8.8.8.8", "93.184.215.14", "172.32.0.1", "100.128.0.1", "1.1.1.1"]) expect(judged(fine), fine).toBeNull();
  });

  it("reads IPv6 with its embedded IPv4 forms, tunnels and special ranges", () => {
    for (const [written, reason] of [
      ["::1", "::1 is the loopback address"],
      ["[::1]", "::1 is the loopback address"],
      ["0:0:0:0:0:0:0:1", "::1 is the loopback address"],
      ["::", ":: is the unspecified address"],
      ["::ffff:127.0.0.1", "::ffff:7f00:1 is 127.0.0.1 in IPv4-mapped form, a loopback address"],
      ["::ffff:169.254.169.254", "::ffff:a9fe:a9fe is 169.254.169.254 in IPv4-mapped form, a link-local address (cloud metadata services answer there)"],
      ["::7f00:1", "::7f00:1 is 127.0.0.1 in IPv4-compatible form (deprecated)"],
      ["::127.0.0.1", "::7f00:1 is 127.0.0.1 in IPv4-compatible form (deprecated)"],
      ["64:ff9b::7f00:1", "64:ff9b::7f00:1 is 127.0.0.1 in NAT64 form, a loopback address"],
      ["64:ff9b::a9fe:a9fe", "64:ff9b::a9fe:a9fe is 169.254.169.254 in NAT64 form, a link-local address (cloud metadata services answer there)"],
      ["64:ff9b:1::1", "64:ff9b:1::1 is a local-use NAT64 address"],
      ["2002:7f00:1::", "2002:7f00:1:: is a 6to4 tunnel address"],
      ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378:8000:63bf:3fff:fdd2 is a Teredo tunnel address"],
      ["2001:db8::1", "2001:db8::1 is a documentation address"],
      ["3fff::1", "3fff::1 is a documentation address"],
      ["2001:2::1", "2001:2::1 is an IETF protocol address"],
      ["fc00::1", "fc00::1 is a private (unique local) address"],
      ["fd12:3456::1", "fd12:3456::1 is a private (unique local) address"],
      ["fe80::1", "fe80::1 is a link-local address"],
      ["fec0::1", "fec0::1 is a site-local address"],
      ["ff02::1", "ff02::1 is a multicast address"],
      ["100::1", "100::1 is a discard-only address"],
      ["5f00::1", "5f00::1 is an SRv6 segment address"],
      ["4000::1", "4000::1 is not a global unicast address"],
    ] as const) {
      expect(judged(written), written).toBe(reason);
    }
    for (const fine of ["2606:4700:4700::1111", "2a00:1450:4001:81b::200e", "64:ff9b::808:808", "::ffff:8.8.8.8"]) expect(judged(fine), fine).toBeNull();
  });

  it("refuses special-use and private names, and single labels; normalises case, the root dot and IDNA", () => {
    for (const [written, reason] of [
      ["localhost", "localhost is a loopback name"],
      ["LOCALHOST.", "localhost is a loopback name"],
      ["ｌｏｃａｌｈｏｓｔ", "localhost is a loopback name"],
      ["a.localhost", "a.localhost is a loopback name"],
      ["intranet", "intranet is a single-label name (only a local network resolves it)"],
      ["printer.local", "printer.local is a private or special-use name (.local)"],
      ["metadata.google.internal", "metadata.google.internal is a private or special-use name (.internal)"],
      ["mail.lan", "mail.lan is a private or special-use name (.lan)"],
      ["mail.corp", "mail.corp is a private or special-use name (.corp)"],
      ["router.home.arpa", "router.home.arpa is a private or special-use name (.arpa)"],
      ["nas.home", "nas.home is a private or special-use name (.home)"],
      ["kubernetes.default.svc", "kubernetes.default.svc is a private or special-use name (.svc)"],
      ["db.svc.cluster.local", "db.svc.cluster.local is a private or special-use name (.local)"],
      ["box.localdomain", "box.localdomain is a private or special-use name (.localdomain)"],
      ["x.onion", "x.onion is a private or special-use name (.onion)"],
      ["x.invalid", "x.invalid is a private or special-use name (.invalid)"],
    ] as const) {
      expect(judged(written), written).toBe(reason);
    }
    expect(parseHost("SMTP.Example.COM.")).toEqual({ kind: "name", text: "smtp.example.com" });
    for (const fine of ["smtp.example.com", "mail.example.org", "xn--bcher-kva.example", "bücher.example"]) expect(judged(fine), fine).toBeNull();
    for (const bad of ["", " ", "a b.com", "smtp.example.com/x", "smtp.example.com:25", "-bad.example.com", "a..b.com", "user@smtp.example.com"]) {
      expect(parseHost(bad), bad).toBeNull();
    }
  });

  it("admits loopback under the URL development switch, and any local host under the mail one", () => {
    expect(judged("127.0.0.1", loopback)).toBeNull();
    expect(judged("localhost", loopback)).toBeNull();
    expect(judged("::ffff:127.0.0.1", loopback)).toBeNull();
    expect(judged("10.0.0.1", loopback)).toBe("10.0.0.1 is a private address");
    expect(judged("mail.lan", loopback)).not.toBeNull();
    for (const host of ["10.0.0.1", "mail.lan", "127.0.0.1", "fd00::1"]) expect(judged(host, anyLocal), host).toBeNull();
  });

  it("judges URLs: scheme, credentials, host, and Salvo's own origin", () => {
    expect(urlProblem("https://files.example.com/a.pdf", spelling)).toBeNull();
    expect(urlProblem("http://files.example.com/a.pdf", spelling)).toBe("must use https");
    expect(urlProblem("http://files.example.com/a.pdf", spelling, { http: true })).toBeNull();
    expect(urlProblem("ftp://files.example.com/a.pdf", spelling, { http: true })).toBe("must be an http(s) URL");
    expect(urlProblem("https://u:p@files.example.com/", spelling)).toBe("must not carry credentials");
    expect(urlProblem("https://8.8.8.8/", spelling)).toBeNull();
    expect(urlProblem("https://8.8.8.8/", spelling, { noIpLiterals: true })).toBe("must name a host, not an IP address");
    expect(urlProblem("https://[::1]/", spelling)).toBe("must name a public host (::1 is the loopback address)");
    expect(urlProblem("https://salvo.test/t/c/x", spelling)).toBe("must not point to Salvo itself");
    expect(urlProblem("https://salvo.test/t/c/x", spelling, { ownOrigin: true })).toBeNull();
    expect(urlProblem("not a url", spelling)).toBe("must be an absolute URL");
  });
});

describe("names judged by what they resolve to (a real DoH responder: test/platform/outbound.global.ts)", () => {
  it("encodes queries and reads answers in RFC 8484 wire format", async () => {
    const query = dnsQuery("localtest.me", AAAA);
    const response = await fetch(`${dns}/dns-query`, { method: "POST", headers: { "Content-Type": "application/dns-message" }, body: query });
    expect(parseDnsAnswer(new Uint8Array(await response.arrayBuffer()), AAAA)).toEqual({ addresses: ["::1"], ttl: 300 });
    expect(() => parseDnsAnswer(new Uint8Array([0, 0, 0x81, 0x82, 0, 1, 0, 0, 0, 0, 0, 0]), AAAA)).toThrow(DnsError);
  });

  it("looks names up over GET, A and AAAA, NXDOMAIN as no address", async () => {
    expect(await lookupAddresses(resolverUrl, "localtest.me")).toEqual({ addresses: ["127.0.0.1", "::1"], ttl: 300 });
    expect((await lookupAddresses(resolverUrl, "www.example.com")).addresses).toEqual(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
    expect((await lookupAddresses(resolverUrl, `nothing-${crypto.randomUUID()}.salvo-test.net`)).addresses).toEqual([]);
    await expect(lookupAddresses(resolverUrl, "x.servfail.example")).rejects.toThrow(DnsError);
  });

  it("refuses at save a name that resolves inside, and lets a save go on when the resolver cannot tell", async () => {
    expect(await checkHost("localtest.me", production)).toEqual({ problem: "must be a public host (localtest.me resolves to 127.0.0.1, a loopback address)" });
    expect(await checkHost("mail.10.1.2.3.nip.io", production)).toEqual({ problem: "must be a public host (mail.10.1.2.3.nip.io resolves to 10.1.2.3, a private address)" });
    expect(await checkHost("SMTP.Example.COM.", production)).toEqual({ host: "smtp.example.com" });
    expect(await checkHost("imap.servfail.example", production)).toEqual({ host: "imap.servfail.example" });
    // Without a resolver a name is judged by its spelling only.
    expect(await checkHost("localtest.me", spelling)).toEqual({ host: "localtest.me" });
    expect(await checkUrl("https://127.0.0.1.nip.io/hook", production)).toBe("must name a public host (127.0.0.1.nip.io resolves to 127.0.0.1, a loopback address)");
  });

  it("refuses at connect time whatever the name resolves to now, and a name it cannot check", async () => {
    const name = `flip-${crypto.randomUUID().slice(0, 8)}.salvo-test.net`;
    const set = (a: string[], aaaa: string[] = []) => fetch(`${dns}/records`, { method: "POST", body: JSON.stringify({ name, a, aaaa }) });
    await set(["93.184.215.14"]);
    expect(await connectRefusal(name, production)).toBeNull();
    await set(["93.184.215.14"], ["fd00::1"]);
    expect(await connectRefusal(name, production)).toMatchObject({ kind: "refused", transient: false, message: `refused to connect: ${name} resolves to fd00::1, a private (unique local) address` });
    const down = await connectRefusal("smtp.servfail.example", production);
    expect(down).toMatchObject({ kind: "unreachable", transient: true });
    expect(down!.message).toMatch(/^refused to connect: smtp\.servfail\.example could not be checked: the resolver answered rcode 2/);
    expect(Number(await (await fetch(`${dns}/queries/${name}`)).text())).toBe(4);
  });
});

describe("guardedFetch", () => {
  it("follows redirects by hand up to the limit, judging each hop", async () => {
    const token = crypto.randomUUID();
    const to = (url: string) => `${target}/redirect/${token}?to=${encodeURIComponent(url)}`;
    const fetched = await guardedFetch(to(to(`${target}/file/${token}`)), {}, loopback, { redirects: 2, timeoutMs: 5_000 });
    expect(fetched.url).toBe(`${target}/file/${token}`);
    expect(new TextDecoder().decode(await fetched.bytes(1_000))).toBe("agenda: pricing, onboarding");
    await expect(guardedFetch(to(to(`${target}/file/${token}`)), {}, loopback, { redirects: 1, timeoutMs: 5_000 })).rejects.toMatchObject({ kind: "redirects" });
    const zero = await guardedFetch(to(`${target}/file/${token}`), {}, loopback, { redirects: 0, timeoutMs: 5_000 });
    expect(zero.response.status).toBe(302);
    await expect(guardedFetch(to("http://[::1"), {}, loopback, { redirects: 3, timeoutMs: 5_000 })).rejects.toMatchObject({ kind: "unreachable", message: "a redirect to an invalid URL (http://[::1)" });
    await expect(guardedFetch(to("http://[fd00::1]/"), {}, loopback, { redirects: 3, timeoutMs: 5_000 })).rejects.toMatchObject({ kind: "refused", message: "refused http://[fd00::1]/: it must name a public host (fd00::1 is a private (unique local) address)" });
  });

  it("bounds the body and the time, as OutboundErrors", async () => {
    const token = crypto.randomUUID();
    const big = await guardedFetch(`${target}/big/${token}`, {}, loopback, { redirects: 0, timeoutMs: 10_000 });
    await expect(big.bytes(1024 * 1024)).rejects.toMatchObject({ kind: "too_large", message: "larger than 1048576 bytes" });
    const stalled = await guardedFetch(`${target}/stall/${token}`, {}, loopback, { redirects: 0, timeoutMs: 300 });
    const error = await stalled.bytes(1_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundError);
    expect(error).toMatchObject({ kind: "timeout", message: "timed out after 300 ms" });
  });
});
