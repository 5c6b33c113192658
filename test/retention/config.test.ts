import { describe, expect, it } from "vitest";
import { config, ConfigError } from "../../src/config";

describe("the retention and offload vars", () => {
  it("default to 30 days and 4096 bytes; 0 turns each off; anything else but a whole number is refused by name", () => {
    expect(config({})).toMatchObject({ webhookDeliveryRetentionDays: 30, bodyOffloadBytes: 4096 });
    expect(config({ WEBHOOK_DELIVERY_RETENTION_DAYS: "0", BODY_OFFLOAD_BYTES: "0" })).toMatchObject({ webhookDeliveryRetentionDays: null, bodyOffloadBytes: null });
    expect(config({ WEBHOOK_DELIVERY_RETENTION_DAYS: "7", BODY_OFFLOAD_BYTES: "256" })).toMatchObject({ webhookDeliveryRetentionDays: 7, bodyOffloadBytes: 256 });
    for (const bad of ["-1", "1.5", "thirty", " "]) {
      expect(() => config({ WEBHOOK_DELIVERY_RETENTION_DAYS: bad })).toThrow(ConfigError);
      expect(() => config({ BODY_OFFLOAD_BYTES: bad })).toThrow(/BODY_OFFLOAD_BYTES/);
    }
  });
});
