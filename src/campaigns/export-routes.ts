import { createRoute, z } from "@hono/zod-openapi";
import { findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { API_KEY_SECURITY, createRouter, errorResponses } from "../platform/openapi";
import { iso } from "../platform/time";
import { exportPage, type ExportRow } from "./export-store";
import { CampaignParams } from "./schemas";

/** Records read per D1 query: the stream holds at most one page, whatever the campaign's size. */
export const EXPORT_PAGE_SIZE = 500;

const COLUMNS = [
  "id",
  "campaign_lead_map_id",
  "status",
  "category",
  "is_interested",
  "created_at",
  "first_name",
  "last_name",
  "email",
  "phone_number",
  "company_name",
  "website",
  "location",
  "custom_fields",
  "linkedin_profile",
  "company_url",
  "is_unsubscribed",
  "unsubscribed_client_id_map",
  "last_email_sequence_sent",
  "open_count",
  "click_count",
  "reply_count",
] as const satisfies readonly (keyof ExportRow)[];

const BOOLEAN_COLUMNS = new Set<string>(["is_interested", "is_unsubscribed"]);

/**
 * One RFC 4180 field: quoted (quotes doubled) when it holds a quote, comma, CR or LF; null is an
 * empty field. Values are written unaltered: no formula escaping, as phone numbers begin with `+`.
 */
export function csvField(value: string | null): string {
  if (value === null) return "";
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function cell(row: ExportRow, column: (typeof COLUMNS)[number]): string | null {
  const value = row[column];
  if (value === null) return null;
  if (BOOLEAN_COLUMNS.has(column)) return value ? "true" : "false";
  if (column === "created_at") return iso(value as number);
  return String(value);
}

function csvLine(fields: (string | null)[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

/** The CSV as a stream that reads the next keyset page only when the reader wants more. */
function exportStream(d1: D1Database, campaignId: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let afterId = 0;
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(csvLine([...COLUMNS])));
      },
      async pull(controller) {
        if (done) return;
        const rows = await exportPage(d1, campaignId, afterId, EXPORT_PAGE_SIZE);
        if (rows.length > 0) {
          afterId = rows[rows.length - 1]!.campaign_lead_map_id;
          controller.enqueue(encoder.encode(rows.map((row) => csvLine(COLUMNS.map((column) => cell(row, column)))).join("")));
        }
        if (rows.length < EXPORT_PAGE_SIZE) {
          done = true;
          controller.close();
        }
      },
    },
    { highWaterMark: 0 },
  );
}

const leadsExport = createRoute({
  method: "get",
  path: "/api/v1/campaigns/{campaign_id}/leads-export",
  operationId: "exportCampaignLeads",
  description: "Every record as `text/csv` (RFC 4180, CRLF, header row; `id` is the lead id, `custom_fields` JSON, values unaltered), streamed " +
    "with `Content-Disposition: attachment`. Errors stay JSON.",
  tags: ["Leads"],
  summary: "Every record of the campaign as CSV (RFC 4180, CRLF), streamed",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams },
  responses: {
    200: { description: "A header row, then one row per record", content: { "text/csv": { schema: z.string() } } },
    ...errorResponses(401, 404, 422, 429),
  },
});

export const exportRoutes = createRouter();

exportRoutes.openapi(leadsExport, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  return c.body(exportStream(c.env.DB, campaign.id), 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename=sl_campaign_${campaign.id}_leads.csv`,
  });
});
