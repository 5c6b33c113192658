import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { afterTheMove } from "../../src/platform/moving";

/**
 * A tracking hit lives only in its queue message until the consumer writes it. While its account is
 * moved between shards the consumer asks for it again later (afterTheMove), and the queue keeps it
 * for max_retries of those: together they must outlast a long move, in every environment.
 */
const LONGEST_MOVE_S = 6 * 3600;

describe("the tracking queue's retries", () => {
  for (const env of [undefined, "staging", "production"]) {
    it(`outlast a move of ${LONGEST_MOVE_S / 3600} hours (${env ?? "local"})`, () => {
      const config = unstable_readConfig({ config: "wrangler.toml", env });
      const tracking = config.queues.consumers?.find((consumer: { queue: string; max_retries?: number }) => consumer.queue.startsWith("salvo-tracking"));
      const retries = tracking?.max_retries ?? 3;
      const waited = Array.from({ length: retries }, (_, i) => afterTheMove(i + 1)).reduce((sum, delay) => sum + delay, 0);
      expect(waited).toBeGreaterThanOrEqual(LONGEST_MOVE_S);
    });
  }
});
