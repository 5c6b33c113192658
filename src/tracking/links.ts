/**
 * Tracking in an email's HTML: links rewritten through the click redirect and an open pixel, all
 * on the mailbox's custom tracking domain when it has one (the customer CNAMEs it to Salvo).
 * HTMLRewriter (the runtime's streaming HTML parser) finds the links, so links inside comments,
 * scripts or attribute text are left alone.
 */

/** Where an email's tracking links point: the mailbox's custom domain, else Salvo's public URL. */
export function trackingBaseUrl(publicUrl: string, customTrackingDomain: string | null): string {
  return customTrackingDomain ? `https://${customTrackingDomain}` : publicUrl;
}

export function unsubscribeUrl(base: string, token: string): string {
  return `${base}/u/${token}`;
}

function clickUrl(base: string, token: string): string {
  return `${base}/t/c/${token}`;
}

function pixelUrl(base: string, token: string): string {
  return `${base}/t/o/${token}.gif`;
}

/** Styled inline and sized 1x1, not hidden: some clients skip loading images that are display:none. */
function pixelTag(src: string): string {
  return `<img src="${src}" width="1" height="1" alt="" style="border:0;width:1px;height:1px;margin:0;padding:0" />`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Attribute values arrive as written (character references included); a link's URL is what a browser would follow. */
function decodeAttribute(value: string): string {
  return value
    .replace(/&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));/g, (whole, name?: string, decimal?: string, hex?: string) => {
      if (name) return ENTITIES[name]!;
      const code = decimal !== undefined ? Number(decimal) : parseInt(hex!, 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .trim();
}

function isWebLink(href: string): boolean {
  return /^https?:\/\//i.test(href);
}

function isTrackable(href: string, base: string): boolean {
  if (!isWebLink(href)) return false;
  return !href.startsWith(`${base}/u/`) && !href.startsWith(`${base}/t/`);
}

/** The http(s) links of an email's HTML, as tracking reads them (so what is checked at save is what gets rewritten). */
export async function webLinks(html: string): Promise<string[]> {
  const links: string[] = [];
  const rewriter = new HTMLRewriter().on("a[href]", {
    element(element) {
      const href = decodeAttribute(element.getAttribute("href") ?? "");
      if (isWebLink(href)) links.push(href);
    },
  });
  await rewriter.transform(new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } })).text();
  return links;
}

/**
 * Why a URL cannot be a click link, or null. A line break or another control character inside a link is
 * never what its writer meant, and would reach the click redirect's Location header.
 */
export function linkProblem(url: string): string | null {
  for (const char of url) {
    const code = char.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) return "holds a line break or control character";
  }
  return null;
}

/** How the HTML is tracked: the open token (null: no pixel) and the click token of a link (null: links as written). */
export interface Tracking {
  base: string;
  open: string | null;
  click: ((url: string) => Promise<string>) | null;
}

/** The HTML with its trackable links through the click redirect and the pixel before its first `</body>`, if it has one. */
export async function trackLinks(html: string, { base, open, click }: Tracking): Promise<{ html: string; pixelPlaced: boolean }> {
  let pixelPlaced = false;
  let rewriter = new HTMLRewriter();
  if (click) {
    rewriter = rewriter.on("a[href]", {
      async element(element) {
        const href = decodeAttribute(element.getAttribute("href") ?? "");
        if (isTrackable(href, base)) element.setAttribute("href", clickUrl(base, await click(href)));
      },
    });
  }
  if (open) {
    const pixel = pixelTag(pixelUrl(base, open));
    rewriter = rewriter.on("body", {
      element(element) {
        element.onEndTag((end) => {
          if (pixelPlaced) return;
          end.before(pixel, { html: true });
          pixelPlaced = true;
        });
      },
    });
  }
  const out = await rewriter.transform(new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8" } })).text();
  return { html: out, pixelPlaced };
}

/** The pixel where an HTML without `</body>` ends. */
export function endPixel(base: string, open: string): string {
  return pixelTag(pixelUrl(base, open));
}

/** An email's HTML tracked: its links through the click redirect, and the pixel before `</body>` or at its end. */
export async function trackedHtml(html: string, tracking: Tracking): Promise<string> {
  const out = await trackLinks(html, tracking);
  return tracking.open && !out.pixelPlaced ? out.html + endPixel(tracking.base, tracking.open) : out.html;
}
