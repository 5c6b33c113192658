import { z } from "@hono/zod-openapi";
import { pathId } from "../platform/openapi";

export const CampaignParams = z.object({ campaign_id: pathId("campaign_id") });

export const Tag = z.object({ id: z.number().int(), name: z.string() }).openapi("Tag");

export const Campaign = z
  .object({
    id: z.number().int(),
    user_id: z.number().int(),
    client_id: z.number().int().nullable(),
    name: z.string(),
    status: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    tags: z.array(Tag),
  })
  .openapi("Campaign");

export const Ok = z.object({ ok: z.boolean() }).openapi("Ok");
