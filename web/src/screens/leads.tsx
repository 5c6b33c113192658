import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Badge, Failed, Loading, Section, useAction, useLoad, when } from "../ui";

type Campaign = Schemas["Campaign"];
type Progress = Schemas["LeadListCsvImportProgress"];

/** The API takes bodies up to 1 MiB: a bigger file goes up in parts, each with the header row. */
const PART_BYTES = 900_000;

function splitCsv(text: string): string[] {
  if (new TextEncoder().encode(text).length <= PART_BYTES) return [text];
  const lines = text.split(/\r?\n/);
  const header = lines.shift()!;
  const parts: string[] = [];
  let part: string[] = [];
  let size = header.length;
  for (const line of lines) {
    if (!line.trim()) continue;
    if (size + line.length + 1 > PART_BYTES && part.length) {
      parts.push([header, ...part].join("\n"));
      part = [];
      size = header.length;
    }
    part.push(line);
    size += line.length + 1;
  }
  if (part.length) parts.push([header, ...part].join("\n"));
  return parts;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  imported: number;
  duplicates: number;
  blocked: number;
  invalid: number;
  pushed: number;
  alreadyInCampaign: number;
  unsubscribed: number;
}

export default function CampaignLeads({ campaign }: { campaign: Campaign }) {
  const [offset, setOffset] = useState(0);
  const page = useLoad(
    async () => await must(api.GET("/api/v1/campaigns/{campaign_id}/leads", { params: { path: { campaign_id: campaign.id }, query: { offset, limit: 50 } } })),
    [campaign.id, offset],
  );
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number; phase: string } | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const [upload, busy] = useAction(async () => {
    if (!file) throw new Error("Choose a CSV file first");
    setOutcome(null);
    setProgress({ done: 0, total: 0, phase: "Uploading" });
    const parts = splitCsv(await file.text());
    // Each upload goes through a lead list of its own (the import runs in the background and reports progress), then into the campaign.
    const list = await must(api.POST("/api/v1/lead-list", { body: { listName: `${campaign.name}: ${file.name} ${new Date().toISOString().slice(0, 16)}`.slice(0, 255), ...(campaign.client_id ? { client_id: campaign.client_id } : {}) } }));
    const listId = list.data.id;
    const imports: Progress[] = [];
    for (const csv of parts) {
      const queued = await must(api.POST("/api/v1/lead-list/{id}/import-csv", { params: { path: { id: listId } }, body: { csv, fileName: file.name } }));
      imports.push(queued.data);
    }
    for (;;) {
      const states = await Promise.all(imports.map((i) => must(api.GET("/api/v1/lead-list/{id}/imports/{import_id}", { params: { path: { id: listId, import_id: i.id } } }))));
      const all = states.map((s) => s.data);
      setProgress({ done: all.reduce((n, s) => n + s.processed, 0), total: all.reduce((n, s) => n + s.total, 0), phase: "Importing" });
      const failed = all.find((s) => s.state === "failed");
      if (failed) throw new Error(`The import failed: ${failed.error ?? "unknown error"}`);
      if (all.every((s) => s.state === "done")) {
        imports.splice(0, imports.length, ...all);
        break;
      }
      await sleep(500);
    }
    setProgress((p) => p && { ...p, phase: "Adding to the campaign" });
    const pushed = await must(api.POST("/api/v1/leads/push-to-campaign", { body: { campaignId: campaign.id, leadList: { listId } } }));
    const sum = (key: "imported" | "duplicates" | "blocked" | "invalid") => imports.reduce((n, s) => n + s[key], 0);
    setOutcome({
      imported: sum("imported"),
      duplicates: sum("duplicates"),
      blocked: sum("blocked") + pushed.data.blocked,
      invalid: sum("invalid"),
      pushed: pushed.data.pushed,
      alreadyInCampaign: pushed.data.duplicates,
      unsubscribed: pushed.data.unsubscribed,
    });
    setProgress((p) => p && { ...p, phase: "Done" });
    await page.reload(true);
    return `${pushed.data.pushed} leads added to ${campaign.name}`;
  });

  const [pauseOrResume] = useAction(async (leadId: number, paused: boolean) => {
    await must(api.POST(paused ? "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/resume" : "/api/v1/campaigns/{campaign_id}/leads/{lead_id}/pause", { params: { path: { campaign_id: campaign.id, lead_id: leadId } } }));
    await page.reload(true);
    return paused ? "Lead resumed" : "Lead paused";
  });

  const total = Number(page.data?.total_leads ?? 0);
  const percent = progress && progress.total ? Math.round((progress.done / progress.total) * 100) : 0;
  return (
    <>
      <Section title="Upload leads (CSV)">
        <form class="row" onSubmit={(e) => (e.preventDefault(), void upload())}>
          <div class="field">
            <label for="csv-file">CSV file with an email column</label>
            <input id="csv-file" type="file" accept=".csv,text/csv" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
          </div>
          <button type="submit" class="primary" disabled={busy || !file}>
            Upload
          </button>
        </form>
        {progress && (
          <div class="progress">
            <label for="csv-progress">
              {progress.phase}: {progress.done} of {progress.total || "?"} rows
            </label>
            <progress id="csv-progress" max={100} value={progress.phase === "Done" ? 100 : percent}>
              {percent}%
            </progress>
          </div>
        )}
        {outcome && (
          <dl class="outcome" aria-label="Import result">
            <div>
              <dt>Added to the campaign</dt>
              <dd data-testid="pushed">{outcome.pushed}</dd>
            </div>
            <div>
              <dt>Already in the campaign</dt>
              <dd>{outcome.alreadyInCampaign}</dd>
            </div>
            <div>
              <dt>Duplicate rows</dt>
              <dd>{outcome.duplicates}</dd>
            </div>
            <div>
              <dt>Invalid emails</dt>
              <dd>{outcome.invalid}</dd>
            </div>
            <div>
              <dt>Blocked</dt>
              <dd>{outcome.blocked}</dd>
            </div>
            <div>
              <dt>Unsubscribed</dt>
              <dd>{outcome.unsubscribed}</dd>
            </div>
          </dl>
        )}
      </Section>
      <Section title={`Leads (${total})`}>
        {page.error && <Failed error={page.error} />}
        {!page.data ? (
          <Loading what="leads" />
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Name</th>
                  <th scope="col">Company</th>
                  <th scope="col">State</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.data.map((r) => (
                  <tr key={r.campaign_lead_map_id}>
                    <td>{r.lead.email}</td>
                    <td>{[r.lead.first_name, r.lead.last_name].filter(Boolean).join(" ")}</td>
                    <td>{r.lead.company_name ?? ""}</td>
                    <td>
                      <Badge tone={r.status === "BLOCKED" || r.status === "STOPPED" ? "bad" : r.status === "PAUSED" ? "warn" : "neutral"}>{r.status.toLowerCase()}</Badge>
                    </td>
                    <td>{when(r.created_at)}</td>
                    <td>
                      {["DRAFTED", "STARTED", "INPROGRESS", "PAUSED"].includes(r.status) && (
                        <button type="button" class="link" onClick={() => pauseOrResume(r.lead.id, r.status === "PAUSED")}>
                          {r.status === "PAUSED" ? "Resume" : "Pause"} {r.lead.email}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <div class="pager">
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - 50))}>
            Previous
          </button>
          <span class="small muted">{total ? `${offset + 1}–${Math.min(offset + 50, total)} of ${total}` : ""}</span>
          <button type="button" disabled={offset + 50 >= total} onClick={() => setOffset(offset + 50)}>
            Next
          </button>
        </div>
      </Section>
    </>
  );
}
