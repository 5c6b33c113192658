import { z } from "@hono/zod-openapi";
import { SENTIMENTS } from "../categories/rules";
import { iso } from "../platform/time";
import { sentimentOfCategory } from "./allowed";

/** How lead categories and reply categorisations read (CONTRACT sections 13, 20.1, 20.5). */

export const CategoryListItem = z
  .object({
    id: z.number().int(),
    name: z.string(),
    created_at: z.string(),
    sentiment_type: z.enum(SENTIMENTS).openapi({ description: "positive, negative or neutral (CONTRACT section 13; a custom category without one reads neutral)" }),
    colour_code: z.string().optional().openapi({ description: "Custom categories only" }),
    user_id: z.number().int().optional().openapi({ description: "Custom categories only: the account" }),
  })
  .openapi("LeadCategory");

export function presentCategoryListItem(row: {
  id: number;
  name: string;
  accountId: number | null;
  sentimentType: string | null;
  colourCode?: string | null;
  createdAt?: Date;
}): z.infer<typeof CategoryListItem> {
  const base = { id: row.id, name: row.name, created_at: iso(row.createdAt ?? new Date(0)), sentiment_type: sentimentOfCategory(row) };
  return row.accountId === null ? base : { ...base, colour_code: row.colourCode ?? "#f9f1e9", user_id: row.accountId };
}

export const Categorisation = z
  .object({
    category_id: z.number().int().nullable(),
    category_name: z.string().nullable(),
    source: z.enum(["rule", "model", "human", "event"]),
    rule_id: z.string().nullable(),
    model: z.string().nullable(),
    prompt_template_id: z.number().int().nullable(),
    prompt_version: z.string().nullable(),
    confidence: z.number().nullable(),
    needs_review: z.boolean(),
    reason: z.string().nullable(),
    categorised_at: z.string(),
  })
  .openapi("ReplyCategorisation", {
    description: "How a reply was categorised (CONTRACT section 20.5): by the rules, the model, a person, or the event that carried it",
  });

type CategorisationValue = z.infer<typeof Categorisation>;

/** A `categorisationJson` column as read back: its object, or null. */
export function parseCategorisation(text: string | null | undefined): CategorisationValue | null {
  return text ? (JSON.parse(text) as CategorisationValue) : null;
}
