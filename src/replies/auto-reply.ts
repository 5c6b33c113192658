import { header, type ParsedMessage } from "./parsed";

/** Placeholder until the out-of-office rules land (wt-ooo): RFC 3834 headers only. */
export function classifyAutoReply(message: ParsedMessage, _receivedAt: number): { autoReply: boolean; outOfOffice: boolean; reason: string | null; returnsAt: number | null } {
  const auto = (header(message, "auto-submitted") ?? "no").toLowerCase() !== "no";
  return { autoReply: auto, outOfOffice: auto && /out of office|automatic reply/i.test(message.subject), reason: auto ? "auto-submitted" : null, returnsAt: null };
}
