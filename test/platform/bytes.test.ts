import { describe, expect, it } from "vitest";
import { fromBase64, fromBase64Url, toBase64, toBase64Url, toHex, utf8Base64, utf8Length, utf8Prefix } from "../../src/platform/bytes";

const ascii = (text: string) => new TextEncoder().encode(text);

describe("the one bytes helper", () => {
  it("encodes the RFC 4648 test vectors", () => {
    const vectors: [string, string, string][] = [
      ["", "", ""],
      ["f", "Zg==", "66"],
      ["fo", "Zm8=", "666f"],
      ["foo", "Zm9v", "666f6f"],
      ["foob", "Zm9vYg==", "666f6f62"],
      ["fooba", "Zm9vYmE=", "666f6f6261"],
      ["foobar", "Zm9vYmFy", "666f6f626172"],
    ];
    for (const [plain, base64, hex] of vectors) {
      expect(toBase64(ascii(plain))).toBe(base64);
      expect(toHex(ascii(plain))).toBe(hex);
      expect(new TextDecoder().decode(fromBase64(base64)!)).toBe(plain);
    }
  });

  it("round-trips every byte value, in both alphabets, from a Uint8Array or an ArrayBuffer", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(fromBase64(toBase64(all))).toEqual(all);
    expect(fromBase64(toBase64(all.buffer))).toEqual(all);
    const url = toBase64Url(all);
    expect(url).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(fromBase64Url(url)).toEqual(all);
    expect(toHex(all.buffer)).toBe([...all].map((b) => b.toString(16).padStart(2, "0")).join(""));
  });

  it("encodes a large buffer (a 5 MiB attachment) without exhausting the stack", () => {
    const big = new Uint8Array(5 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 1) big[i] = i * 7;
    const encoded = toBase64(big);
    expect(encoded.length).toBe(Math.ceil(big.length / 3) * 4);
    const back = fromBase64(encoded)!;
    expect(back.length).toBe(big.length);
    expect(back.every((byte, i) => byte === big[i])).toBe(true);
  });

  it("refuses what is not base64 rather than guessing", () => {
    expect(fromBase64("not base64!")).toBeNull();
    expect(fromBase64Url("a+b/")).toBeNull();
    expect(fromBase64Url("YWJj")).toEqual(ascii("abc"));
  });

  it("base64s text as its UTF-8 bytes (SASL strings, encoded words)", () => {
    expect(utf8Base64("\0ada@x.test\0pässword")).toBe(toBase64(ascii("\0ada@x.test\0pässword")));
    expect(atob(utf8Base64("é"))).toBe("\xc3\xa9");
  });

  it("measures and cuts text by its UTF-8 bytes, never inside a character", () => {
    for (const text of ["", "abc", "é€😀", "a\ud800b", "😀".repeat(1000)]) expect(utf8Length(text)).toBe(ascii(text).length);
    expect(utf8Prefix("aé€😀b", 1)).toBe("a");
    expect(utf8Prefix("aé€😀b", 4)).toBe("aé");
    expect(utf8Prefix("aé€😀b", 9)).toBe("aé€");
    expect(utf8Prefix("aé€😀b", 10)).toBe("aé€😀");
    expect(utf8Prefix("aé€😀b", 100)).toBe("aé€😀b");
    const long = "€".repeat(100_000);
    expect(ascii(utf8Prefix(long, 64 * 1024)).length).toBeLessThanOrEqual(64 * 1024);
    expect(utf8Prefix(long, 64 * 1024).length).toBe(Math.floor((64 * 1024) / 3));
  });
});
