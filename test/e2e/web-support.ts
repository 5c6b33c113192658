// Shared by the web app's browser suites: one Chromium (Debian's, offline flags), axe-core injected
// through DevTools (the app's CSP admits no inline script), screenshots into docs/screenshots.
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SCREENSHOTS = join(import.meta.dirname, "..", "..", "docs", "screenshots");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launch(): Promise<Browser> {
  // playwright-core gives each context an empty profile of its own (its --user-data-dir).
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical findings on the page as it is now (WCAG 2.x A and AA rules). */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(() =>
    (window as unknown as { axe: { run: (ctx: Document, opts: unknown) => Promise<{ violations: unknown[] }> } }).axe
      .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } })
      .then((r) => r.violations),
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join("; ")})`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

/** The API as a script would call it: the key in X-API-Key. */
export async function apiCall<T = Record<string, unknown>>(base: string, key: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { "X-API-Key": key, ...(init.body === undefined ? {} : { "Content-Type": "application/json" }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

/** A fresh account with a budget no browser flow meets (the default 60 a minute is for scripts). */
export async function provision(base: string, adminToken: string, name: string): Promise<{ id: number; apiKey: string }> {
  const response = await fetch(`${base}/admin/v1/accounts`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ email: `${name}-${Date.now()}@web.example`, name, rate_limit_per_minute: 100000, rate_limit_burst: 10000 }),
  });
  const body = (await response.json()) as { id: number; api_key: string };
  if (response.status !== 201) throw new Error(`provisioning answered ${response.status}`);
  return { id: body.id, apiKey: body.api_key };
}

export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/#/inbox`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Screens" }).waitFor();
}
