import { inject } from "vitest";
import { callJson } from "../helpers";

const dns = inject("dnsControl");

/** A fresh domain name (the domain verdicts are cached 24 h in D1, shared by the suite's files). */
export function domain(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}.verify.test`;
}

/** Sets a name's records on the suite's DNS-over-HTTPS resolver (test/platform/outbound.global.ts). */
export async function setRecords(name: string, records: { a?: string[]; aaaa?: string[]; mx?: { preference: number; exchange: string }[] }): Promise<void> {
  const response = await fetch(`${dns}/records`, { method: "POST", body: JSON.stringify({ name, ...records }) });
  if (response.status !== 204) throw new Error(`the resolver refused the records: ${response.status}`);
}

/** A domain that receives mail through MX hosts of this provider ("google", "microsoft" or another name). */
export async function mailDomain(label: string, provider = "mx.hosting.example"): Promise<string> {
  const name = domain(label);
  const exchange = provider === "google" ? "aspmx.l.google.com" : provider === "microsoft" ? `${name.replaceAll(".", "-")}.mail.protection.outlook.com` : provider;
  await setRecords(name, { mx: [{ preference: 10, exchange }] });
  return name;
}

/** How many lookups the resolver answered for a name. */
export async function queriesOf(name: string): Promise<number> {
  return (await (await fetch(`${dns}/queries/${name}`)).json()) as number;
}

/** Polls a verification job's status until it ends (or the time is up). */
export async function waitForJob(apiKey: string, jobId: string, timeoutMs = 60_000) {
  const started = Date.now();
  for (;;) {
    const { body } = await callJson<{ status: string; processed: number; total: number; counts: Record<string, number>; data: unknown[] }>(`/api/v1/verify-emails/status?job_id=${jobId}`, { apiKey });
    if (body.status === "completed" || body.status === "failed" || Date.now() - started > timeoutMs) return body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
