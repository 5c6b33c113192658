import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { campaigns } from "./campaigns";
import { createdAt, instant, updatedAt } from "./columns";

export const VARIANT_DISTRIBUTION_TYPES = ["MANUAL_EQUAL", "MANUAL_PERCENTAGE", "AI_EQUAL"] as const;
export const WINNING_METRICS = ["OPEN_RATE", "CLICK_RATE", "REPLY_RATE", "POSITIVE_REPLY_RATE"] as const;

/**
 * One step of a campaign's sequence. Steps left out of a save are soft-deleted (`deletedAt`), so
 * the sends that point at them keep their history; a live step's number is unique per campaign.
 */
export const sequenceSteps = sqliteTable(
  "sequence_steps",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    campaignId: integer("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    seqNumber: integer("seq_number").notNull(),
    delayInDays: integer("delay_in_days").notNull(),
    subject: text("subject").notNull().default(""),
    emailBody: text("email_body"),
    variantDistributionType: text("variant_distribution_type", { enum: VARIANT_DISTRIBUTION_TYPES }).notNull().default("MANUAL_EQUAL"),
    leadDistributionPercentage: integer("lead_distribution_percentage"),
    winningMetricProperty: text("winning_metric_property", { enum: WINNING_METRICS }),
    deletedAt: instant("deleted_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("sequence_steps_campaign_idx").on(t.campaignId, t.seqNumber)],
);

/** A/B variants of a step; the weights choose one per record (src/sequences/variants.ts). */
export const sequenceVariants = sqliteTable(
  "sequence_variants",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    stepId: integer("step_id")
      .notNull()
      .references(() => sequenceSteps.id, { onDelete: "cascade" }),
    label: text("label").notNull(),
    subject: text("subject").notNull().default(""),
    emailBody: text("email_body").notNull(),
    percentage: integer("percentage"),
    position: integer("position").notNull(),
    deletedAt: instant("deleted_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("sequence_variants_step_idx").on(t.stepId)],
);
