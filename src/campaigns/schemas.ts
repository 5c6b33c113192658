import { z } from "@hono/zod-openapi";
import { SendingStatusAnswer } from "../engine/status";
import { pathId } from "../platform/openapi";

export const CampaignParams = z.object({ campaign_id: pathId("campaign_id") });

export const Tag = z
  .object({ id: z.number().int(), name: z.string(), tag_id: z.number().int(), tag_name: z.string(), tag_color: z.string() })
  .openapi("Tag");

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
    track_settings: z.array(z.string()),
    scheduler_cron_value: z
      .object({ tz: z.string(), days: z.array(z.number().int()), startHour: z.string(), endHour: z.string() })
      .nullable(),
    min_time_btwn_emails: z.number().int().nullable(),
    max_leads_per_day: z.number().int().nullable(),
    schedule_start_time: z.string().nullable(),
    stop_lead_settings: z.string(),
    unsubscribe_text: z.string(),
    send_as_plain_text: z.boolean(),
    force_plain_text: z.boolean(),
    follow_up_percentage: z.number().int(),
    enable_ai_esp_matching: z.boolean(),
    send_in_lead_timezone: z.boolean(),
    add_unsubscribe_tag: z.boolean(),
    auto_pause_domain_leads_on_reply: z.boolean(),
    bounce_autopause_threshold: z.number().int().nullable(),
    out_of_office_detection_settings: z.object({
      ignoreOOOasReply: z.boolean(),
      autoReactivateOOO: z.boolean(),
      reactivateOOOwithDelay: z.number().int(),
      autoCategorizeOOO: z.boolean(),
    }),
    ai_categorisation_options: z.unknown().openapi({ description: "As stored by the settings route (null when never set)" }),
    auto_categorise_reply: z.boolean().openapi({ description: "Whether replies are categorised automatically (CONTRACT section 20.3)" }),
    spintax_distribution_mode: z.number().int().openapi({ description: "2 = random (default), 1 = incremental (CONTRACT 21.1)" }),
    folder_id: z.number().int().nullable().openapi({ description: "The campaign folder it is filed in (CONTRACT 21.1)" }),
    parent_campaign_id: z.number().int().nullable(),
    team_member_id: z.number().int().nullable(),
    sending_status: SendingStatusAnswer.optional(),
  })
  .openapi("Campaign");

export const Ok = z.object({ ok: z.boolean() }).openapi("Ok");

/** An id in a body: a number or its decimal string (contract, rules shared by sections 10-16). */
export const bodyId = z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d{0,15}$/).transform(Number)]);

/** The shared "nothing else to say" answer of a mutation (contract, rules shared by sections 10-16). */
export const ACK = "Answers the Ack `{ok: true, success: true, message}`.";
export const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() });

export function ack(message: string) {
  return { ok: true, success: true, message };
}
