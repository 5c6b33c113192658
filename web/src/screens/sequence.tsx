import { useEffect, useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { previewStep, type DraftStep, type DraftVariant } from "../preview";
import { Failed, Field, Loading, Section, useAction, useLoad } from "../ui";

type Campaign = Schemas["Campaign"];
/** What the editor reads of a stored step. */
interface Step {
  id: number;
  subject: string;
  email_body: string | null;
  seq_delay_details: { delay_in_days: number };
  sequence_variants: { id: number; variant_label: string; subject: string; email_body: string; variant_distribution_percentage: number | null }[] | null;
}

function toDraft(step: Step): DraftStep {
  return {
    id: step.id,
    delayDays: String(step.seq_delay_details?.delay_in_days ?? 0),
    subject: step.subject ?? "",
    body: step.email_body ?? "",
    variants: (step.sequence_variants ?? []).map((v) => ({
      id: v.id,
      label: v.variant_label,
      subject: v.subject ?? "",
      body: v.email_body ?? "",
      percentage: v.variant_distribution_percentage === null || v.variant_distribution_percentage === undefined ? "" : String(v.variant_distribution_percentage),
    })),
  };
}

const emptyStep = (n: number): DraftStep => ({ delayDays: n === 0 ? "0" : "2", subject: "", body: "", variants: [] });

export default function CampaignSequence({ campaign }: { campaign: Campaign }) {
  const stored = useLoad(async () => await must(api.GET("/api/v1/campaigns/{campaign_id}/sequences", { params: { path: { campaign_id: campaign.id } } })), [campaign.id]);
  const leads = useLoad(async () => (await must(api.GET("/api/v1/campaigns/{campaign_id}/leads", { params: { path: { campaign_id: campaign.id }, query: { limit: 100 } } }))).data, [campaign.id]);
  const [steps, setSteps] = useState<DraftStep[] | null>(null);
  const [previewLead, setPreviewLead] = useState("");

  useEffect(() => {
    if (stored.data && steps === null) setSteps(stored.data.length ? stored.data.map(toDraft) : [emptyStep(0)]);
  }, [stored.data]);

  const [save, busy] = useAction(async () => {
    const body = {
      sequences: steps!.map((s, i) => ({
        ...(s.id ? { id: s.id } : {}),
        seq_number: i + 1,
        seq_delay_details: { delay_in_days: Number(s.delayDays) || 0 },
        subject: s.subject,
        email_body: s.variants.length ? null : s.body,
        seq_variants: s.variants.map((v, j) => ({
          ...(v.id ? { id: v.id } : {}),
          variant_label: v.label || String.fromCharCode(65 + j),
          subject: v.subject,
          email_body: v.body,
          ...(v.percentage.trim() ? { variant_distribution_percentage: Number(v.percentage) } : {}),
        })),
      })),
    };
    const saved = await must(api.POST("/api/v1/campaigns/{campaign_id}/sequences", { params: { path: { campaign_id: campaign.id } }, body }));
    setSteps(saved.data.map(toDraft));
    return `Sequence saved: ${saved.data.length} step${saved.data.length === 1 ? "" : "s"}`;
  });

  if (stored.error) return <Failed error={stored.error} />;
  if (!steps) return <Loading what="the sequence" />;

  const update = (i: number, change: Partial<DraftStep>) => setSteps(steps.map((s, j) => (j === i ? { ...s, ...change } : s)));
  const updateVariant = (i: number, k: number, change: Partial<DraftVariant>) =>
    update(i, { variants: steps[i]!.variants.map((v, j) => (j === k ? { ...v, ...change } : v)) });
  const lead = (leads.data ?? []).find((l) => String(l.campaign_lead_map_id) === previewLead);
  const active = campaign.status === "ACTIVE";

  return (
    <>
      {active && <p class="warn-text">Pause the campaign to change its sequence.</p>}
      <p class="muted small">
        Variables: {"{{first_name}}"}, {"{{last_name}}"}, {"{{company_name}}"}, {"{{email}}"}, any custom field as {"{{Field Name}}"}, a fallback as {"{{first_name | there}}"}. Spintax:{" "}
        {"{Hi|Hello|Hey}"}. %signature% adds the mailbox's signature. A follow-up with no subject answers in the same thread.
      </p>
      <form onSubmit={(e) => (e.preventDefault(), void save())}>
        {steps.map((step, i) => (
          <fieldset class="card step" key={i}>
            <legend>Step {i + 1}</legend>
            <div class="grid3">
              <Field label={`Step ${i + 1}: days after the previous step`}>
                {(id) => <input id={id} type="number" min={0} max={365} value={step.delayDays} onInput={(e) => update(i, { delayDays: (e.target as HTMLInputElement).value })} />}
              </Field>
            </div>
            <Field label={`Step ${i + 1} subject`} wide hint={i > 0 ? "Leave empty to reply in the same thread" : undefined}>
              {(id) => <input id={id} type="text" value={step.subject} onInput={(e) => update(i, { subject: (e.target as HTMLInputElement).value })} />}
            </Field>
            {step.variants.length === 0 ? (
              <Field label={`Step ${i + 1} body`} wide>
                {(id) => <textarea id={id} rows={6} value={step.body} onInput={(e) => update(i, { body: (e.target as HTMLTextAreaElement).value })} />}
              </Field>
            ) : (
              step.variants.map((v, k) => (
                <fieldset class="variant" key={k}>
                  <legend>
                    Step {i + 1}, variant {v.label || String.fromCharCode(65 + k)}
                  </legend>
                  <div class="grid3">
                    <Field label={`Step ${i + 1} variant ${k + 1} label`}>
                      {(id) => <input id={id} type="text" maxLength={10} value={v.label} onInput={(e) => updateVariant(i, k, { label: (e.target as HTMLInputElement).value })} />}
                    </Field>
                    <Field label={`Step ${i + 1} variant ${k + 1} share (%)`} hint="Weights; empty for an equal split">
                      {(id) => <input id={id} type="number" min={0} max={100} value={v.percentage} onInput={(e) => updateVariant(i, k, { percentage: (e.target as HTMLInputElement).value })} />}
                    </Field>
                  </div>
                  <Field label={`Step ${i + 1} variant ${k + 1} subject`} wide>
                    {(id) => <input id={id} type="text" value={v.subject} onInput={(e) => updateVariant(i, k, { subject: (e.target as HTMLInputElement).value })} />}
                  </Field>
                  <Field label={`Step ${i + 1} variant ${k + 1} body`} wide>
                    {(id) => <textarea id={id} rows={5} value={v.body} onInput={(e) => updateVariant(i, k, { body: (e.target as HTMLTextAreaElement).value })} />}
                  </Field>
                  <button type="button" onClick={() => update(i, { variants: step.variants.filter((_, j) => j !== k), body: step.variants.length === 1 ? v.body : step.body })}>
                    Remove variant {v.label || String.fromCharCode(65 + k)} of step {i + 1}
                  </button>
                </fieldset>
              ))
            )}
            <div class="row">
              <button
                type="button"
                onClick={() => {
                  const seed = step.variants.length ? [] : [{ label: "A", subject: step.subject, body: step.body, percentage: "" }];
                  update(i, { variants: [...step.variants, ...seed, { label: String.fromCharCode(65 + step.variants.length + seed.length), subject: step.subject, body: "", percentage: "" }] });
                }}
              >
                Add a variant to step {i + 1}
              </button>
              {steps.length > 1 && (
                <button type="button" onClick={() => setSteps(steps.filter((_, j) => j !== i))}>
                  Remove step {i + 1}
                </button>
              )}
            </div>
          </fieldset>
        ))}
        <div class="row">
          <button type="button" onClick={() => setSteps([...steps, emptyStep(steps.length)])} disabled={steps.length >= 20}>
            Add a step
          </button>
          <button type="submit" class="primary" disabled={busy || active}>
            Save sequence
          </button>
        </div>
      </form>
      <Section title="Preview for a lead">
        <Field label="Lead">
          {(id) => (
            <select id={id} value={previewLead} onChange={(e) => setPreviewLead((e.target as HTMLSelectElement).value)}>
              <option value="">Choose a lead…</option>
              {(leads.data ?? []).map((l) => (
                <option key={l.campaign_lead_map_id} value={l.campaign_lead_map_id}>
                  {[l.lead.first_name, l.lead.last_name].filter(Boolean).join(" ") || l.lead.email} ({l.lead.email})
                </option>
              ))}
            </select>
          )}
        </Field>
        {leads.data?.length === 0 && <p class="muted">Add leads to the campaign to preview it for one of them.</p>}
        {lead && (
          <ol class="preview" aria-label="Rendered emails">
            {steps.map((step, i) => {
              // A follow-up without a subject answers the first email as the lead received it.
              const first = previewStep(steps[0]!, 1, lead.campaign_lead_map_id, lead.lead, "").subject;
              const shown = previewStep(step, i + 1, lead.campaign_lead_map_id, lead.lead, first);
              return (
                <li key={i} class="card">
                  <p class="small muted">
                    Step {i + 1}
                    {shown.variant ? ` · variant ${shown.variant}` : ""} · to {lead.lead.email}
                  </p>
                  <p class="subject">{shown.subject || <em>(no subject)</em>}</p>
                  <div class="body">{shown.body}</div>
                  {shown.problems.map((p) => (
                    <p class="error small" key={p}>
                      {p}
                    </p>
                  ))}
                </li>
              );
            })}
          </ol>
        )}
      </Section>
    </>
  );
}
