import { useState } from "preact/hooks";
import { api, must, session, type Schemas } from "../api";
import { go, href } from "../router";
import { Badge, Failed, Field, Loading, Section, Tabs, useAction, useLoad, when } from "../ui";
import CampaignSequence from "./sequence";
import CampaignLeads from "./leads";
import CampaignSchedule from "./schedule";

type Campaign = Schemas["Campaign"];

/** Campaign statuses, and what a campaign not ACTIVE says about sending (engine/why-not-sending.ts words). */
const STATUS_WORDS: Record<string, { label: string; tone: "good" | "warn" | "bad" | "neutral"; sending?: string }> = {
  DRAFTED: { label: "Draft", tone: "neutral", sending: "The campaign has not been started" },
  ACTIVE: { label: "Active", tone: "good" },
  PAUSED: { label: "Paused", tone: "warn", sending: "The campaign is paused" },
  STOPPED: { label: "Stopped", tone: "bad", sending: "The campaign is stopped" },
  COMPLETED: { label: "Completed", tone: "neutral", sending: "The campaign is completed" },
  ARCHIVED: { label: "Archived", tone: "neutral", sending: "The campaign is archived" },
};

export function StatusBadge({ status }: { status: string }) {
  const words = STATUS_WORDS[status] ?? { label: status, tone: "neutral" as const };
  return <Badge tone={words.tone}>{words.label}</Badge>;
}

export default function Campaigns({ path }: { path: string[] }) {
  const [id, tab = "overview"] = path;
  if (id) return <CampaignDetail id={Number(id)} tab={tab} />;
  return <CampaignList />;
}

function CampaignList() {
  const list = useLoad(async () => {
    const campaigns = await must(api.GET("/api/v1/campaigns"));
    // Only an ACTIVE campaign's sending_status needs the server (the others follow from the status); read a few at a time.
    const active = campaigns.filter((c) => c.status === "ACTIVE").slice(0, 20);
    const statuses = new Map<number, string>();
    for (let i = 0; i < active.length; i += 4) {
      const read = await Promise.all(active.slice(i, i + 4).map((c) => api.GET("/api/v1/campaigns/{campaign_id}", { params: { path: { campaign_id: c.id } } })));
      read.forEach(({ data }) => data?.sending_status && statuses.set(data.id, data.sending_status.message));
    }
    return campaigns.map((c) => ({ ...c, sending: STATUS_WORDS[c.status]?.sending ?? statuses.get(c.id) ?? "Active" }));
  }, []);
  const clients = useLoad(async () => (session.value?.kind === "account" ? await must(api.GET("/api/v1/client")) : []), []);
  const [name, setName] = useState("");
  const [clientId, setClientId] = useState("");
  const [create, busy] = useAction(async () => {
    const made = await must(api.POST("/api/v1/campaigns/create", { body: { name: name.trim() || "Untitled Campaign", ...(clientId ? { client_id: Number(clientId) } : {}) } }));
    go("campaigns", made.id, "sequence");
    return `Created ${made.name}`;
  });
  return (
    <>
      <h1>Campaigns</h1>
      <Section title="New campaign">
        <form class="row" onSubmit={(e) => (e.preventDefault(), void create())}>
          <Field label="Name">{(id) => <input id={id} type="text" value={name} maxLength={255} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Untitled Campaign" />}</Field>
          {(clients.data?.length ?? 0) > 0 && (
            <Field label="Client">
              {(id) => (
                <select id={id} value={clientId} onChange={(e) => setClientId((e.target as HTMLSelectElement).value)}>
                  <option value="">The account itself</option>
                  {clients.data!.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <button type="submit" class="primary" disabled={busy}>
            Create campaign
          </button>
        </form>
      </Section>
      <Section title="All campaigns">
        {list.error && <Failed error={list.error} />}
        {list.loading && !list.data ? (
          <Loading what="campaigns" />
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Sending</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {(list.data ?? []).map((c) => (
                  <tr key={c.id}>
                    <td>
                      <a href={href("campaigns", c.id)}>{c.name}</a>
                    </td>
                    <td>
                      <StatusBadge status={c.status} />
                    </td>
                    <td>{c.sending}</td>
                    <td>{when(c.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data?.length === 0 && <p class="muted">No campaigns yet.</p>}
          </div>
        )}
      </Section>
    </>
  );
}

function CampaignDetail({ id, tab }: { id: number; tab: string }) {
  const campaign = useLoad(async () => await must(api.GET("/api/v1/campaigns/{campaign_id}", { params: { path: { campaign_id: id } } })), [id]);
  const tabs = [
    { id: "overview", label: "Overview", href: href("campaigns", id) },
    { id: "sequence", label: "Sequence", href: href("campaigns", id, "sequence") },
    { id: "schedule", label: "Schedule & settings", href: href("campaigns", id, "schedule") },
    { id: "leads", label: "Leads", href: href("campaigns", id, "leads") },
  ];
  if (campaign.error && !campaign.data) return <Failed error={campaign.error} />;
  if (!campaign.data) return <Loading what="the campaign" />;
  const c = campaign.data;
  return (
    <>
      <p class="small">
        <a href={href("campaigns")}>← Campaigns</a>
      </p>
      <h1>
        {c.name} <StatusBadge status={c.status} />
      </h1>
      <Tabs tabs={tabs} current={tab} label="Campaign sections" />
      {tab === "sequence" ? (
        <CampaignSequence campaign={c} />
      ) : tab === "schedule" ? (
        <CampaignSchedule campaign={c} onSaved={() => campaign.reload(true)} />
      ) : tab === "leads" ? (
        <CampaignLeads campaign={c} />
      ) : (
        <Overview campaign={c} reload={() => campaign.reload(true)} />
      )}
    </>
  );
}

function Overview({ campaign, reload }: { campaign: Campaign; reload: () => Promise<void> }) {
  const status = campaign.sending_status;
  const [setStatus, busy] = useAction(async (to: "START" | "PAUSED" | "STOPPED") => {
    await must(api.POST("/api/v1/campaigns/{campaign_id}/status", { params: { path: { campaign_id: campaign.id } }, body: { status: to } }));
    await reload();
    return to === "START" ? "Campaign started" : to === "PAUSED" ? "Campaign paused" : "Campaign stopped";
  });
  return (
    <>
      <Section
        title="Sending"
        actions={
          <>
            {campaign.status !== "ACTIVE" && campaign.status !== "STOPPED" && (
              <button type="button" class="primary" disabled={busy} onClick={() => setStatus("START")}>
                Start campaign
              </button>
            )}
            {campaign.status === "ACTIVE" && (
              <button type="button" disabled={busy} onClick={() => setStatus("PAUSED")}>
                Pause campaign
              </button>
            )}
            {campaign.status !== "STOPPED" && (
              <button type="button" class="danger" disabled={busy} onClick={() => confirm("Stop this campaign for good?") && setStatus("STOPPED")}>
                Stop
              </button>
            )}
          </>
        }
      >
        <p data-testid="sending-status">
          <strong>{status?.message ?? "—"}</strong>
          {status?.next_send_at && <span class="muted"> · next send {when(status.next_send_at)}</span>}
        </p>
      </Section>
      <CampaignMailboxes campaignId={campaign.id} onChange={reload} />
    </>
  );
}

function CampaignMailboxes({ campaignId, onChange }: { campaignId: number; onChange: () => Promise<void> }) {
  const attached = useLoad(async () => await must(api.GET("/api/v1/campaigns/{campaign_id}/email-accounts", { params: { path: { campaign_id: campaignId } } })), [campaignId]);
  const all = useLoad(async () => await must(api.GET("/api/v1/email-accounts")), []);
  const [choice, setChoice] = useState("");
  const [attach, busy] = useAction(async () => {
    if (!choice) throw new Error("Choose a mailbox");
    await must(api.POST("/api/v1/campaigns/{campaign_id}/email-accounts", { params: { path: { campaign_id: campaignId } }, body: { email_account_ids: [Number(choice)] } }));
    setChoice("");
    await attached.reload(true);
    await onChange();
    return "Mailbox attached";
  });
  const [detach] = useAction(async (mailboxId: number) => {
    await must(api.DELETE("/api/v1/campaigns/{campaign_id}/email-accounts/{email_account_id}", { params: { path: { campaign_id: campaignId, email_account_id: mailboxId } } }));
    await attached.reload(true);
    await onChange();
    return "Mailbox detached";
  });
  const attachedIds = new Set((attached.data ?? []).map((m) => m.id));
  return (
    <Section title="Mailboxes">
      <ul class="plain">
        {(attached.data ?? []).map((m) => (
          <li key={m.id}>
            {m.from_name} &lt;{m.from_email}&gt; {m.is_suspended ? <Badge tone="bad">suspended</Badge> : m.is_smtp_success === false ? <Badge tone="bad">failing</Badge> : null}{" "}
            <button type="button" class="link" onClick={() => detach(m.id)}>
              Detach {m.from_email}
            </button>
          </li>
        ))}
      </ul>
      {attached.data?.length === 0 && <p class="muted">No mailbox attached: the campaign cannot send.</p>}
      <form class="row" onSubmit={(e) => (e.preventDefault(), void attach())}>
        <Field label="Attach a mailbox">
          {(id) => (
            <select id={id} value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
              <option value="">Choose…</option>
              {(all.data ?? [])
                .filter((m) => !attachedIds.has(m.id))
                .map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.from_email}
                  </option>
                ))}
            </select>
          )}
        </Field>
        <button type="submit" disabled={busy}>
          Attach
        </button>
        <a href={href("mailboxes")}>Add a mailbox</a>
      </form>
    </Section>
  );
}
