import { isAccountMoving } from "./db-errors";
import { log } from "./logging";
import { afterTheMove } from "./moving";

/** What a consumer did with a batch's messages, counted as it calls ack and retry. */
interface Tally {
  acked: Set<string>;
  retried: Set<string>;
}

function tallied<Body>(message: Message<Body>, tally: Tally): Message<Body> {
  return {
    get id() {
      return message.id;
    },
    get timestamp() {
      return message.timestamp;
    },
    get body() {
      return message.body;
    },
    get attempts() {
      return message.attempts;
    },
    ack() {
      tally.retried.delete(message.id);
      tally.acked.add(message.id);
      message.ack();
    },
    retry(options) {
      tally.acked.delete(message.id);
      tally.retried.add(message.id);
      message.retry(options);
    },
  };
}

/**
 * Hands the consumer a batch that counts its acks and retries, then logs ONE line for the batch:
 * the queue, how many messages came, were acknowledged and retried, the duration, and the error
 * if the consumer threw (rethrown, so the platform retries what was not acknowledged). Messages
 * a consumer neither acks nor retries are acknowledged by the platform when it returns.
 */
export async function consumeLogged<Body>(batch: MessageBatch<Body>, consume: (batch: MessageBatch<Body>) => Promise<void>): Promise<void> {
  const started = Date.now();
  const tally: Tally = { acked: new Set(), retried: new Set() };
  const messages = batch.messages.map((message) => tallied(message, tally));
  const counted: MessageBatch<Body> = {
    queue: batch.queue,
    metadata: batch.metadata,
    messages,
    ackAll() {
      for (const message of batch.messages) tally.acked.add(message.id);
      tally.retried.clear();
      batch.ackAll();
    },
    retryAll(options) {
      for (const message of batch.messages) tally.retried.add(message.id);
      tally.acked.clear();
      batch.retryAll(options);
    },
  };
  const line = () => ({
    queue: batch.queue,
    messages: batch.messages.length,
    acked: tally.acked.size,
    retried: tally.retried.size,
    duration_ms: Date.now() - started,
  });
  try {
    await consume(counted);
  } catch (error) {
    if (isAccountMoving(error)) {
      for (const message of messages) if (!tally.acked.has(message.id)) message.retry({ delaySeconds: afterTheMove(message.attempts) });
      log("warn", "queue batch", { ...line(), error: "account moving: retried later" });
      return;
    }
    log("error", "queue batch", { ...line(), error: error instanceof Error ? error.message : String(error) });
    throw error;
  }
  log("info", "queue batch", line());
}
