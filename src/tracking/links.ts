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

export function clickUrl(base: string, token: string): string {
  return `${base}/t/c/${token}`;
}

export function pixelUrl(base: string, token: string): string {
  return `${base}/t/o/${token}.gif`;
}

/** Styled inline and sized 1x1, not hidden: some clients skip loading images that are display:none. */
function pixelTag(src: string): string {
  return `<img src="${src}" width="1" height="1" alt="" style="border:0;width:1px;height:1px;margin:0;padding:0" />`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };

/** Attribute values arrive as written; a link's URL is what a browser would follow. */
function decodeAttribute(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|apos|#39);/g, (_, name: string) => ENTITIES[name]!).trim();
}

function isTrackable(href: string, base: string): boolean {
  if (!/^https?:\/\//i.test(href)) return false;
  return !href.startsWith(`${base}/u/`) && !href.startsWith(`${base}/t/`);
}

export async function trackedHtml(
  html: string,
  opts: { base: string; open: string | null; click: ((url: string) => Promise<string>) | null },
): Promise<string> {
  const { base, open, click } = opts;
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
  return open && !pixelPlaced ? out + pixelTag(pixelUrl(base, open)) : out;
}
