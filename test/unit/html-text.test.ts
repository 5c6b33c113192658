import { describe, expect, it } from "vitest";
import { htmlToText } from "../../src/mail/html-text";

describe("htmlToText (html-to-text underneath)", () => {
  it("decodes every named entity, not only the five XML ones", () => {
    expect(htmlToText("<p>It&rsquo;s &ldquo;fine&rdquo; &mdash; &euro;5 &hellip;</p>")).toBe("It’s “fine” — €5 …");
  });

  it("keeps a link's address after its text, quoted or not, and not twice", () => {
    expect(htmlToText('<a href=https://x.example/book>Book a call</a> or <a href="https://x.example/">https://x.example/</a>')).toBe(
      "Book a call (https://x.example/book) or https://x.example/",
    );
    expect(htmlToText('<a href="https://x.example/go"><img src="b.png" alt="Click here"></a>')).toBe("Click here (https://x.example/go)");
  });

  it("keeps table cells apart, in columns", () => {
    const text = htmlToText("<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>$10</td></tr></table>");
    expect(text.split("\n").map((line) => line.split(/\s{2,}/))).toEqual([
      ["Plan", "Price"],
      ["Basic", "$10"],
    ]);
  });

  it("says nothing of <head>, <style> and <script>, and nothing of an image without alt text", () => {
    expect(htmlToText('<html><head><title>T</title><style>p{}</style></head><body><script>x()</script><p>Hi<img src="pixel.gif"></p></body></html>')).toBe("Hi");
  });

  // The attack pass's poison: each of these took seconds to minutes with the regular expressions
  // this replaced (116 KB of unclosed links: 234 s). Here they finish (the CPU figures are in
  // bench/RESULTS.md, `npm run chaos:poison`), and the output stays bounded.
  const poisons: [string, string][] = [
    ["116 KB of unclosed links", '<a href="x">'.repeat(116_000 / 12)],
    ["600 KB of unclosed links", '<a href="x">'.repeat(600_000 / 12)],
    ["600 KB of blank lines", "\n".repeat(600_000)],
    ["600 KB of nested divs", "<div>".repeat(120_000)],
    ["600 KB of nested tables", "<table><tr><td>".repeat(40_000)],
    ["600 KB of nested lists", "<ul><li>".repeat(75_000)],
    ["600 KB of '<'", "<".repeat(600_000)],
    ["600 KB of paragraphs", "<p>x</p>".repeat(75_000)],
  ];
  for (const [name, html] of poisons) {
    it(`reads ${name} in bounded time and size`, () => {
      const text = htmlToText(html);
      expect(text.length).toBeLessThanOrEqual(html.length);
    });
  }

  it("reads the first 5,000 elements of a giant document and says the rest was left out", () => {
    const text = htmlToText("<p>x</p>".repeat(6_000));
    expect(text.split("\n\n")).toHaveLength(5_000);
    expect(text.endsWith("\n...")).toBe(true);
  });
});
