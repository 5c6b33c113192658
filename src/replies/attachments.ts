import type { OutboundAttachment } from "../db/schema";
import type { MimeAttachment } from "../mail/mime";
import { guardedFetch, OutboundError, type OutboundPolicy } from "../platform/outbound";

/** Each file at most this large (CONTRACT section 12), and all of one reply together at most twice that. */
const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
const TOTAL_MAX_BYTES = 2 * ATTACHMENT_MAX_BYTES;
const FETCH_TIMEOUT_MS = 20_000;
/** A file host may redirect (to a CDN, a signed URL); each hop is judged again. */
const MAX_REDIRECTS = 5;

export class AttachmentError extends Error {}

function fileName(file: OutboundAttachment, url: URL): string {
  const fromUrl = decodeURIComponent(url.pathname.split("/").pop() ?? "");
  return (file.file_name ?? fromUrl).trim() || "attachment";
}

/**
 * Fetches a reply's files at send time under the outbound rule (https to public hosts, each hop of a
 * redirect judged again; each file within 10 MB and 20 s). Any failure is an AttachmentError naming
 * the file: a reply never goes out without a file its writer attached.
 */
export async function fetchAttachments(files: OutboundAttachment[], policy: OutboundPolicy, limits: { timeoutMs?: number } = {}): Promise<MimeAttachment[]> {
  const fetched: MimeAttachment[] = [];
  let total = 0;
  for (const file of files) {
    try {
      const answer = await guardedFetch(file.file_url, {}, policy, { redirects: MAX_REDIRECTS, timeoutMs: limits.timeoutMs ?? FETCH_TIMEOUT_MS });
      if (!answer.response.ok) {
        await answer.response.body?.cancel();
        throw new AttachmentError(`Attachment ${file.file_url} could not be fetched: HTTP ${answer.response.status}`);
      }
      const content = await answer.bytes(Math.min(ATTACHMENT_MAX_BYTES, TOTAL_MAX_BYTES - total));
      total += content.byteLength;
      const served = answer.response.headers.get("Content-Type")?.split(";")[0]?.trim();
      fetched.push({ filename: fileName(file, new URL(file.file_url)), contentType: file.file_type ?? served ?? "application/octet-stream", content });
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      if (error.kind === "too_large") throw new AttachmentError(`Attachment ${file.file_url} is larger than 10 MB`);
      throw new AttachmentError(`Attachment ${file.file_url} could not be fetched: ${error.message}`);
    }
  }
  return fetched;
}
