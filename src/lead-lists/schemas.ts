import { z } from "@hono/zod-openapi";
import { VERIFY_MODES } from "../verification/upload";
import { LeadInput } from "../leads/lead-input";
import { ApiError } from "../platform/errors";
import { BodyId, pathId, queryCount, queryId } from "../platform/openapi";
import { type ImportSettings } from "./import";



/** The shared rules' acknowledgement of a mutation. */
export const LEAD_LIST_TAG = ["Lead lists"];

export const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() });

/** What a push into a list does with a lead of another scope, said on each route that pushes into one. */
export const LIST_SCOPE = "A list holds leads of its own client scope: another scope's lead joins as the list's scope's lead of that address, copied when there is none (as push-to-campaign does).";

const MAX_PUSH_IDS = 10_000;
const LeadIds = z.array(BodyId).min(1).max(MAX_PUSH_IDS);

export const ListName = z.string().trim().min(1).max(255);

const Tag = z.object({ id: z.number().int(), name: z.string(), color: z.string() });

export const LeadList = z
  .object({
    id: z.number().int(),
    name: z.string(),
    lead_count: z.number().int(),
    client_id: z.number().int().nullable(),
    tags: z.array(Tag),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("LeadList");

export const ListParams = z.object({ id: pathId("id") });

/** Skipping rules, read from `csvSettings` or from the top level (DL, BC); csvSettings wins. */
export const SkipSettings = {
  csvSettings: z
    .object({
      ignoreGlobalBlockList: z.boolean().optional(),
      ignoreUnsubscribeList: z.boolean().optional(),
      verifyEmails: z.enum(VERIFY_MODES).optional().openapi({ description: "Extension (CONTRACT 22): `off` (default), `flag` (verified in the background) or `skip` (invalid addresses not added)" }),
      skipRisky: z.boolean().optional().openapi({ description: "With `verifyEmails: skip`, risky addresses are not added either" }),
    })
    .optional(),
  verify_emails: z.enum(VERIFY_MODES).optional(),
  ignoreGlobalBlockList: z.boolean().optional(),
  ignoreUnsubscribeList: z.boolean().optional(),
  ignore_global_block_list: z.boolean().optional(),
  ignore_unsubscribe_list: z.boolean().optional(),
};

type SkipInput = { [K in keyof typeof SkipSettings]?: z.infer<(typeof SkipSettings)[K]> };

export function skipSettings(body: SkipInput): ImportSettings {
  return {
    ignoreGlobalBlockList: body.csvSettings?.ignoreGlobalBlockList ?? body.ignoreGlobalBlockList ?? body.ignore_global_block_list ?? false,
    ignoreUnsubscribeList: body.csvSettings?.ignoreUnsubscribeList ?? body.ignoreUnsubscribeList ?? body.ignore_unsubscribe_list ?? false,
    verifyEmails: body.csvSettings?.verifyEmails ?? body.verify_emails ?? "off",
    skipRisky: body.csvSettings?.skipRisky ?? false,
  };
}

const MAX_IMPORT_LEADS = 1000;
export const ImportBody = z
  .object({
    leadList: z.array(LeadInput).min(1).max(MAX_IMPORT_LEADS).optional(),
    leads: z.array(LeadInput).min(1).max(MAX_IMPORT_LEADS).optional().openapi({ description: "Alias of leadList (BC)" }),
    lead_list: z.array(LeadInput).min(1).max(MAX_IMPORT_LEADS).optional().openapi({ description: "Alias of leadList" }),
    fileName: z.string().max(255).optional(),
    emailFieldsAdded: z.unknown().optional(),
    customFields: z.unknown().optional(),
    allow_duplicate: z.boolean().optional(),
    ...SkipSettings,
  })
  .openapi("LeadListImport");

export const ImportCounts = z.object({
  total_leads: z.number().int(),
  imported: z.number().int(),
  duplicates: z.number().int(),
  blocked: z.number().int(),
  invalid: z.number().int(),
  invalid_timezone_count: z.number().int().openapi({ description: "Leads whose time zone was not a known IANA name (stored as null, CONTRACT 23.1)" }),
  invalid_emails: z.array(z.string()).optional().openapi({ description: "With `verifyEmails: skip`: the addresses verification kept out (counted in `invalid`)" }),
  verification_job_id: z.string().optional().openapi({ description: "With `verifyEmails: flag`: the background job (`GET /verify-emails/status?job_id=`)" }),
});

export const CsvImportJson = z
  .object({ csv: z.string().min(1), fileName: z.string().max(255).optional(), file_name: z.string().max(255).optional(), ...SkipSettings })
  .openapi("LeadListCsvImport");

export const CsvImport = z
  .object({
    id: z.number().int(),
    list_id: z.number().int(),
    file_name: z.string(),
    state: z.enum(["queued", "running", "done", "failed"]),
    total: z.number().int(),
    processed: z.number().int(),
    imported: z.number().int(),
    duplicates: z.number().int(),
    blocked: z.number().int(),
    invalid: z.number().int(),
    invalid_timezone_count: z.number().int().openapi({ description: "Rows whose time zone was not a known IANA name (stored as null, CONTRACT 23.1)" }),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .openapi("LeadListCsvImportProgress");

export const AssignTagsBody = z
  .object({
    listIds: z.array(BodyId).min(1).max(10).optional(),
    tagIds: z.array(BodyId).max(10).optional(),
    removeTagIds: z.array(BodyId).max(10).optional(),
    id: BodyId.optional().openapi({ description: "One list (BC), instead of listIds" }),
    tag_ids: z.array(BodyId).max(10).optional().openapi({ description: "Alias of tagIds (BC)" }),
  })
  .openapi("LeadListAssignTags");

export const PushToCampaignBody = z
  .object({
    campaignId: BodyId.optional(),
    campaign_id: BodyId.optional().openapi({ description: "Alias of campaignId (BC)" }),
    campaignName: z.string().trim().min(1).max(255).optional().openapi({ description: "A campaign by name; none of that name creates a DRAFTED one" }),
    action: z.enum(["copy", "move"]).optional(),
    leadList: z
      .object({ listId: BodyId.optional(), leadIds: LeadIds.optional(), allLeads: z.boolean().optional() })
      .optional(),
    id: BodyId.optional().openapi({ description: "The source list (BC), instead of leadList.listId" }),
    filters: z.unknown().optional(),
    ...SkipSettings,
  })
  .openapi("PushToCampaign");

export const PushCounts = z.object({
  campaign_id: z.number().int(),
  total_leads: z.number().int(),
  pushed: z.number().int(),
  duplicates: z.number().int(),
  blocked: z.number().int(),
  unsubscribed: z.number().int(),
});

export const PushBetweenListsBody = z
  .object({
    action: z.enum(["copy", "move"]).optional(),
    move: z.boolean().optional().openapi({ description: "BC: true = move" }),
    toListId: BodyId.optional(),
    to_list_id: BodyId.optional(),
    fromListId: BodyId.optional(),
    from_list_id: BodyId.optional(),
    leadIds: LeadIds.optional(),
    lead_ids: LeadIds.optional(),
  })
  .openapi("PushBetweenLists");

export const MoveLeadsBody = z
  .object({ sourceListId: BodyId, targetListId: BodyId, leadIds: LeadIds.optional(), allLeads: z.boolean().optional() })
  .openapi("MoveLeadsBetweenLists");

export const PushToListBody = z
  .object({ listId: BodyId, leadIds: LeadIds.optional(), allLeads: z.boolean().optional(), action: z.enum(["copy", "move"]).optional() })
  .openapi("PushToList");

export const CampaignToListBody = z
  .object({ campaignId: BodyId, listId: BodyId, leadMapIds: LeadIds.optional(), allLeads: z.boolean().optional() })
  .openapi("CampaignPushToList");

export const ListQuery = z.object({
  listName: z.string().max(255).optional(),
  tagIds: z
    .string()
    .regex(/^\s*[1-9][0-9]{0,15}\s*(,\s*[1-9][0-9]{0,15}\s*)*$/, "Comma-separated tag ids")
    .transform((value) => value.split(",").map((id) => Number(id.trim())))
    .optional()
    .openapi({ type: "string", example: "1,2" }),
  client_id: queryId().optional(),
  limit: queryCount(1, 1000).default(10),
  offset: queryCount(0).default(0),
  starting_after: queryId().optional().openapi({ description: "A list id: the page starts after it (stays right while lists are added)" }),
});

export const MemberQuery = z.object({
  limit: queryCount(1, 1000).default(100),
  offset: queryCount(0).default(0),
  starting_after: queryId().optional().openapi({ description: "A lead id: the page starts after it" }),
});

// Routes: literal paths before the {id} ones.


/** A required choice among alias fields the schema cannot express: the contract's 422 body. */
export function required(path: string, message: string): never {
  throw ApiError.validation([{ path, message }]);
}
