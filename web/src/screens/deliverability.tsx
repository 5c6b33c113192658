import { useState } from "preact/hooks";
import { api, must } from "../api";
import { href } from "../router";
import { Badge, Failed, Field, Loading, Section, useAction, useLoad, when } from "../ui";

const FOLDERS = ["inbox", "tab", "spam", "not_received", "pending"] as const;
type Folder = (typeof FOLDERS)[number];
const FOLDER_WORDS: Record<Folder, { label: string; tone: "good" | "warn" | "bad" | "neutral" }> = {
  inbox: { label: "Inbox", tone: "good" },
  tab: { label: "Tab", tone: "warn" },
  spam: { label: "Spam", tone: "bad" },
  not_received: { label: "Not received", tone: "bad" },
  pending: { label: "Pending", tone: "neutral" },
};

export default function Deliverability({ path }: { path: string[] }) {
  const [id] = path;
  const tests = useLoad(async () => await must(api.POST("/api/v1/spam-test/report", { body: { limit: 50, offset: 0 } })), []);
  return (
    <>
      <h1>Deliverability</h1>
      <Section title="Spam tests">
        {tests.error && <Failed error={tests.error} />}
        {!tests.data && !tests.error ? (
          <Loading what="spam tests" />
        ) : tests.data ? (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Test</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {tests.data.data.map((t) => (
                  <tr key={t.id}>
                    <td>
                      <a href={href("deliverability", t.id)}>{t.test_name}</a>
                    </td>
                    <td>{t.test_type}</td>
                    <td>{t.status}</td>
                    <td>{when(t.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {tests.data.data.length === 0 && <p class="muted">No spam tests yet.</p>}
          </div>
        ) : null}
      </Section>
      {id ? <Placement key={id} id={id} /> : !tests.error && <CreateTest onCreated={() => tests.reload(true)} />}
    </>
  );
}

function CreateTest({ onCreated }: { onCreated: () => Promise<void> }) {
  const campaigns = useLoad(async () => await must(api.GET("/api/v1/campaigns")), []);
  const providers = useLoad(async () => await must(api.GET("/api/v1/spam-test/seed/providers")), []);
  const mailboxes = useLoad(async () => await must(api.GET("/api/v1/email-accounts")), []);
  const [name, setName] = useState("");
  const [campaignId, setCampaignId] = useState("");
  const steps = useLoad(
    async () => (campaignId ? await must(api.GET("/api/v1/campaigns/{campaign_id}/sequences", { params: { path: { campaign_id: Number(campaignId) } } })) : []),
    [campaignId],
  );
  const [stepId, setStepId] = useState("");
  const [chosenProviders, setProviders] = useState<string[]>([]);
  const [senders, setSenders] = useState<string[]>([]);
  const [seeds, setSeeds] = useState<string[] | null>(null);
  const [create, busy] = useAction(async () => {
    const made = await must(
      api.POST("/api/v1/spam-test/manual", {
        body: { test_name: name, spam_filters: true, link_checker: false, all_email_sent_without_time_gap: false, min_time_btwn_emails: 10, min_time_unit: "minutes", is_warmup: false, campaign_id: Number(campaignId), sequence_mapping_id: Number(stepId), provider_ids: chosenProviders, sender_accounts: senders },
      }),
    );
    setSeeds(made.seed_emails.map((s) => s.email));
    await onCreated();
    return "Spam test created";
  });
  const allProviders = (providers.data ?? []).flatMap((r) => r.groups.flatMap((g) => g.providers));
  return (
    <Section title="New spam test">
      <form onSubmit={(e) => (e.preventDefault(), void create())}>
        <div class="grid3">
          <Field label="Test name">{(fid) => <input id={fid} required maxLength={255} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />}</Field>
          <Field label="Campaign">
            {(fid) => (
              <select id={fid} required value={campaignId} onChange={(e) => setCampaignId((e.target as HTMLSelectElement).value)}>
                <option value="">Choose…</option>
                {(campaigns.data ?? []).map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Email to test (sequence step)">
            {(fid) => (
              <select id={fid} required value={stepId} onChange={(e) => setStepId((e.target as HTMLSelectElement).value)}>
                <option value="">Choose…</option>
                {(steps.data ?? []).map((s) => (
                  <option key={s.id} value={s.id}>
                    Step {s.seq_number}: {s.subject || "(same thread)"}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <fieldset class="kinds">
          <legend>Providers</legend>
          {allProviders.length === 0 && <p class="muted small">No seed inboxes are set up on this deployment (operators add them under /admin/v1/seed-mailboxes).</p>}
          {allProviders.map((p) => (
            <label key={p.provider_id} class="check">
              <input type="checkbox" checked={chosenProviders.includes(p.provider_id)} onChange={(e) => setProviders((e.target as HTMLInputElement).checked ? [...chosenProviders, p.provider_id] : chosenProviders.filter((x) => x !== p.provider_id))} />
              {p.provider_name}
            </label>
          ))}
        </fieldset>
        <fieldset class="kinds">
          <legend>Sender mailboxes</legend>
          {(mailboxes.data ?? []).map((m) => (
            <label key={m.id} class="check">
              <input type="checkbox" checked={senders.includes(m.from_email)} onChange={(e) => setSenders((e.target as HTMLInputElement).checked ? [...senders, m.from_email] : senders.filter((x) => x !== m.from_email))} />
              {m.from_email}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={busy}>
          Create spam test
        </button>
      </form>
      {seeds && (
        <p role="status">
          Send the email to these seed inboxes: <code>{seeds.join(", ")}</code>
        </p>
      )}
    </Section>
  );
}

function Placement({ id }: { id: string }) {
  const report = useLoad(async () => await must(api.GET("/api/v1/spam-test/report/{spamTestId}/sender-account-wise", { params: { path: { spamTestId: id } } })), [id]);
  if (report.error) return <Failed error={report.error} />;
  if (!report.data) return <Loading what="the placement grid" />;
  const senders = report.data;
  const providers = [...new Map(senders.flatMap((s) => s.details.map((d) => [d.provider_id, d.provider_name] as const))).entries()];
  const cell = (sender: (typeof senders)[number], provider: string) => {
    const counts = new Map<Folder, number>();
    for (const d of sender.details) if (d.provider_id === provider) counts.set(d.folder, (counts.get(d.folder) ?? 0) + 1);
    return FOLDERS.filter((f) => counts.has(f)).map((f) => (
      <Badge key={f} tone={FOLDER_WORDS[f].tone}>
        {FOLDER_WORDS[f].label}
        {counts.get(f)! > 1 ? ` ×${counts.get(f)}` : ""}
      </Badge>
    ));
  };
  return (
    <Section title="Placement" actions={<a href={href("deliverability")}>New spam test</a>}>
      {senders.length === 0 ? (
        <p class="muted">No results yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="grid" data-testid="placement-grid">
            <caption>Where each sender's email landed, per provider</caption>
            <thead>
              <tr>
                <th scope="col">Provider</th>
                {senders.map((s) => (
                  <th scope="col" key={s.id}>
                    {s.email}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {providers.map(([pid, pname]) => (
                <tr key={pid}>
                  <th scope="row">{pname}</th>
                  {senders.map((s) => (
                    <td key={s.id}>{cell(s, pid)}</td>
                  ))}
                </tr>
              ))}
              <tr>
                <th scope="row">Totals</th>
                {senders.map((s) => (
                  <td key={s.id} class="small">
                    inbox {s.inbox_count} · tab {s.tab_count} · spam {s.spam_count} · not received {s.not_received_count} · pending {s.pending_count}
                  </td>
                ))}
              </tr>
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
