import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const { url } = inject("salvo");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOT = join(import.meta.dirname, "..", "..", "test-results", "docs.png");

// The machine's network is closed: without these, Chromium keeps dialling Google's services.
const OFFLINE_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const HTTP_METHODS = ["get", "post", "put", "patch", "delete"];

/** The operations of `paths`, and of `webhooks` (Swagger UI draws those too, the event kind as the path). */
async function documentedOperations(): Promise<string[]> {
  const document = (await (await fetch(`${url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
    webhooks?: Record<string, Record<string, unknown>>;
  };
  return [...Object.entries(document.paths), ...Object.entries(document.webhooks ?? {})].flatMap(([path, item]) =>
    Object.keys(item)
      .filter((method) => HTTP_METHODS.includes(method))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

describe("/docs in a real browser", () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: OFFLINE_FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("renders every documented operation from the Worker alone, and saves a screenshot", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    const offOrigin: string[] = [];
    const pageErrors: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(url) && !request.url().startsWith("data:")) offOrigin.push(request.url());
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));

    const expected = await documentedOperations();
    await page.goto(`${url}/docs`, { waitUntil: "networkidle" });
    await page.locator(".opblock").first().waitFor();

    // Past 150 tags and operations Swagger UI draws only what is near the viewport: walk the page
    // down half a screen at a time and collect every operation drawn on the way.
    const seen = new Set<string>();
    for (let step = 0; step < 400; step++) {
      const drawn = await page.locator(".opblock").evaluateAll((blocks) =>
        blocks.map((block) => {
          const method = block.querySelector(".opblock-summary-method")?.textContent?.trim() ?? "";
          const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "";
          return `${method} ${path}`;
        }),
      );
      drawn.forEach((operation) => seen.add(operation));
      const atBottom = await page.evaluate(() => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2);
      if (atBottom) break;
      await page.evaluate(() => window.scrollBy(0, window.innerHeight / 2));
      await page.waitForTimeout(100);
    }
    const rendered = [...seen];
    expect(expected.length).toBeGreaterThan(10);
    expect(rendered.sort()).toEqual(expected.sort());
    expect(await page.title()).toBe("Salvo API reference");
    expect(offOrigin).toEqual([]);
    expect(pageErrors).toEqual([]);

    await page.evaluate(() => window.scrollTo(0, 0));
    mkdirSync(join(SCREENSHOT, ".."), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });
});
