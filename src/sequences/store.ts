import { and, asc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { sequenceSteps, sequenceVariants } from "../db/schema";
import type { Database } from "../platform/db";
import { inList } from "../platform/sql";
import { defaultLabel, type StepInput, type StoredSequence } from "./rules";

export type StepRow = typeof sequenceSteps.$inferSelect;
export type VariantRow = typeof sequenceVariants.$inferSelect;

/** A campaign's live steps by number, each with its live variants by position. */
export async function loadSequence(db: Database, campaignId: number): Promise<{ step: StepRow; variants: VariantRow[] }[]> {
  const steps = await db
    .select()
    .from(sequenceSteps)
    .where(and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt)))
    .orderBy(asc(sequenceSteps.seqNumber));
  if (steps.length === 0) return [];
  const variants = await db
    .select()
    .from(sequenceVariants)
    .where(and(sql`${sequenceVariants.stepId} ${inList(steps.map((s) => s.id))}`, isNull(sequenceVariants.deletedAt)))
    .orderBy(asc(sequenceVariants.position));
  return steps.map((step) => ({ step, variants: variants.filter((v) => v.stepId === step.id) }));
}

export function storedShape(sequence: Awaited<ReturnType<typeof loadSequence>>): StoredSequence {
  return { steps: sequence.map(({ step, variants }) => ({ id: step.id, variantIds: variants.map((v) => v.id) })) };
}

/** The step a new variant hangs from: its own id when known, else the live step with its number. */
function stepOf(campaignId: number, step: StepInput): SQL {
  return step.id !== null
    ? sql`${step.id}`
    : sql`(SELECT id FROM sequence_steps WHERE campaign_id = ${campaignId} AND seq_number = ${step.seqNumber} AND deleted_at IS NULL)`;
}

/**
 * Replaces a campaign's sequence in ONE batch: steps and variants left out are soft-deleted (their
 * sends keep pointing at them), those with an id are updated in place, the others inserted; a new
 * step's variants find it by its number among the live steps, in the same batch.
 */
export async function replaceSequence(db: Database, campaignId: number, steps: StepInput[], now: Date): Promise<void> {
  const keptSteps = steps.flatMap((step) => (step.id === null ? [] : [step.id]));
  const keptVariants = steps.flatMap((step) => (step.variants ?? []).flatMap((v) => (v.id === null ? [] : [v.id])));
  const live = and(eq(sequenceSteps.campaignId, campaignId), isNull(sequenceSteps.deletedAt));
  const fields = (step: StepInput) => ({
    seqNumber: step.seqNumber,
    delayInDays: step.delayInDays,
    subject: step.subject,
    emailBody: step.variants && step.variants.length > 0 ? null : step.emailBody,
    variantDistributionType: step.variantDistributionType,
    leadDistributionPercentage: step.leadDistributionPercentage,
    winningMetricProperty: step.winningMetricProperty,
    updatedAt: now,
  });
  const statements: BatchItem<"sqlite">[] = [
    db
      .update(sequenceVariants)
      .set({ deletedAt: now })
      .where(
        and(
          isNull(sequenceVariants.deletedAt),
          sql`${sequenceVariants.stepId} IN (SELECT id FROM sequence_steps WHERE campaign_id = ${campaignId})`,
          sql`${sequenceVariants.id} NOT ${inList(keptVariants)}`,
        ),
      ),
    db
      .update(sequenceSteps)
      .set({ deletedAt: now })
      .where(and(live, sql`${sequenceSteps.id} NOT ${inList(keptSteps)}`)),
    ...steps.flatMap((step): BatchItem<"sqlite">[] =>
      step.id === null
        ? [db.insert(sequenceSteps).values({ campaignId, ...fields(step), createdAt: now })]
        : [db.update(sequenceSteps).set(fields(step)).where(and(live, eq(sequenceSteps.id, step.id)))],
    ),
    ...steps.flatMap((step) =>
      (step.variants ?? []).map((variant, position): BatchItem<"sqlite"> => {
        const values = {
          label: variant.label ?? defaultLabel(position),
          subject: variant.subject,
          emailBody: variant.emailBody,
          percentage: variant.percentage,
          position,
        };
        if (variant.id !== null) {
          // Held to its own step as well as the rules' check (sequenceProblem): an id never reaches another campaign's variant.
          const ownStep = step.id === null ? sql`false` : sql`${sequenceVariants.stepId} = ${step.id}`;
          return db
            .update(sequenceVariants)
            .set({ ...values, updatedAt: now })
            .where(and(eq(sequenceVariants.id, variant.id), ownStep, sql`${sequenceVariants.stepId} IN (SELECT id FROM sequence_steps WHERE campaign_id = ${campaignId})`));
        }
        return db.insert(sequenceVariants).values({ stepId: stepOf(campaignId, step), ...values, createdAt: now, updatedAt: now });
      }),
    ),
  ];
  const [first, ...rest] = statements;
  await db.batch([first!, ...rest]);
}
