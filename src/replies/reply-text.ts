import type { ParsedMessage } from "./parsed";

/** Placeholder until the reply-text rules land (wt-ooo): cut at the first quote line. */
export function replyText(message: ParsedMessage): string {
  const lines = message.text.split(/\r?\n/);
  const cut = lines.findIndex((line) => /^>/.test(line) || /^On .+ wrote:$/.test(line));
  return (cut < 0 ? lines : lines.slice(0, cut)).join("\n").trim();
}
