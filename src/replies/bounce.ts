import type { ParsedMessage } from "./parsed";

/** Placeholder until the bounce rules land (wt-bounce). */
export function classifyBounce(message: ParsedMessage): { kind: "hard" | "soft"; recipient: string | null; status: string | null; diagnostic: string | null; originalMessageId: string | null } | null {
  const report = message.parts.find((p) => p.mimeType === "message/delivery-status");
  if (!report) return null;
  const status = /^Status:\s*([245]\.\d+\.\d+)/im.exec(report.content)?.[1] ?? null;
  const original = message.parts.map((p) => /^Message-ID:\s*(<[^>]+>)/im.exec(p.content)?.[1]).find(Boolean) ?? null;
  return { kind: status?.startsWith("4") ? "soft" : "hard", recipient: /^Final-Recipient:\s*rfc822;\s*(\S+)/im.exec(report.content)?.[1] ?? null, status, diagnostic: null, originalMessageId: original };
}
