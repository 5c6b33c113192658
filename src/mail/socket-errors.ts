/**
 * A socket's `closed` promises reject when it fails (a host name that does not resolve, a reset).
 * The sessions already report those failures through their reads and writes, so the promises are
 * observed here rather than left as unhandled rejections.
 */
export function quiet(socket: { closed: Promise<void> }, reader: ReadableStreamDefaultReader<Uint8Array>, writer: WritableStreamDefaultWriter<Uint8Array>): void {
  const ignore = () => {};
  socket.closed.catch(ignore);
  reader.closed.catch(ignore);
  writer.closed.catch(ignore);
}
