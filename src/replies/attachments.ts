import type { OutboundAttachment } from "../db/schema";
import type { MimeAttachment } from "../mail/mime";

/** Each file at most this large (CONTRACT section 12), and all of one reply together at most twice that. */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
const TOTAL_MAX_BYTES = 2 * ATTACHMENT_MAX_BYTES;
const FETCH_TIMEOUT_MS = 20_000;

export class AttachmentError extends Error {}

function fileName(file: OutboundAttachment, url: URL): string {
  const fromUrl = decodeURIComponent(url.pathname.split("/").pop() ?? "");
  return (file.file_name ?? fromUrl).trim() || "attachment";
}

/** Reads a body, refusing it as soon as it passes `max` bytes (a lying or absent Content-Length included). */
async function boundedBytes(response: Response, max: number, url: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get("Content-Length") ?? NaN);
  if (declared > max) throw new AttachmentError(`Attachment ${url} is larger than 10 MB`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (let next = await reader?.read(); next && !next.done; next = await reader!.read()) {
    size += next.value.byteLength;
    if (size > max) {
      await reader!.cancel();
      throw new AttachmentError(`Attachment ${url} is larger than 10 MB`);
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Fetches a reply's files at send time (https only; each within 10 MB and 20 s). Any failure is an
 * AttachmentError naming the file: a reply never goes out without a file its writer attached.
 */
export async function fetchAttachments(files: OutboundAttachment[]): Promise<MimeAttachment[]> {
  const fetched: MimeAttachment[] = [];
  let total = 0;
  for (const file of files) {
    const url = new URL(file.file_url);
    if (url.protocol !== "https:") throw new AttachmentError(`Attachment ${file.file_url} must be an https URL`);
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "follow" });
    } catch (error) {
      throw new AttachmentError(`Attachment ${file.file_url} could not be fetched: ${(error as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new AttachmentError(`Attachment ${file.file_url} could not be fetched: HTTP ${response.status}`);
    }
    const content = await boundedBytes(response, Math.min(ATTACHMENT_MAX_BYTES, TOTAL_MAX_BYTES - total), file.file_url);
    total += content.byteLength;
    const served = response.headers.get("Content-Type")?.split(";")[0]?.trim();
    fetched.push({ filename: fileName(file, url), contentType: file.file_type ?? served ?? "application/octet-stream", content });
  }
  return fetched;
}
