import { useState } from "preact/hooks";
import { api, must, session } from "../api";
import { href } from "../router";
import { Badge, Failed, Field, Loading, Section, useAction, useLoad, when } from "../ui";

const KINDS = ["EMAIL_SENT", "FIRST_EMAIL_SENT", "EMAIL_OPEN", "EMAIL_LINK_CLICK", "EMAIL_REPLY", "EMAIL_BOUNCE", "LEAD_UNSUBSCRIBED", "LEAD_CATEGORY_UPDATED", "CAMPAIGN_STATUS_CHANGED", "UNTRACKED_REPLIES", "EMAIL_ACCOUNT_DISCONNECTED"] as const;

export default function Webhooks({ path }: { path: string[] }) {
  const [id] = path;
  const list = useLoad(async () => await must(api.GET("/api/v1/webhooks")), []);
  return (
    <>
      <h1>Webhooks</h1>
      <Section title="Webhooks">
        {list.error && <Failed error={list.error} />}
        {!list.data ? (
          <Loading what="webhooks" />
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">URL</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Events</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((w) => (
                  <tr key={w.id}>
                    <td>
                      <a href={href("webhooks", w.id)}>{w.name}</a>
                      {w.disabled_at && (
                        <>
                          {" "}
                          <Badge tone="bad">disabled {when(w.disabled_at)}: its receiver answered 410 Gone; save it to turn it back on</Badge>
                        </>
                      )}
                    </td>
                    <td class="small break">{w.webhook_url}</td>
                    <td>
                      {w.association_type}
                      {w.association_type === "campaign" ? ` ${w.email_campaign_id ?? ""}` : w.association_type === "client" ? ` ${w.client_id ?? ""}` : ""}
                    </td>
                    <td class="small">{w.event_types.join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {list.data.length === 0 && <p class="muted">No webhooks yet.</p>}
          </div>
        )}
      </Section>
      {id ? <Deliveries key={id} id={Number(id)} /> : <CreateWebhook onCreated={() => list.reload(true)} />}
    </>
  );
}

function CreateWebhook({ onCreated }: { onCreated: () => Promise<void> }) {
  const campaigns = useLoad(async () => await must(api.GET("/api/v1/campaigns")), []);
  const isClient = session.value?.kind === "client";
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [scope, setScope] = useState<"user" | "client" | "campaign">(isClient ? "client" : "user");
  const [campaignId, setCampaignId] = useState("");
  const [kinds, setKinds] = useState<string[]>(["EMAIL_REPLY"]);
  const [secret, setSecret] = useState<string | null>(null);
  const [create, busy] = useAction(async () => {
    if (kinds.length === 0) throw new Error("Choose at least one event");
    const made = await must(
      api.POST("/api/v1/webhook/create", {
        body: {
          name: name.trim() || undefined,
          webhook_url: url.trim(),
          association_type: scope,
          ...(scope === "campaign" ? { email_campaign_id: Number(campaignId) } : {}),
          ...(scope === "client" ? { client_id: session.value!.client_id ?? undefined } : {}),
          event_types: kinds as (typeof KINDS)[number][],
          force_create: true,
        },
      }),
    );
    setSecret(made.secret ?? null);
    await onCreated();
    return "Webhook created";
  });
  return (
    <Section title="New webhook">
      <form onSubmit={(e) => (e.preventDefault(), void create())}>
        <div class="grid3">
          <Field label="Name">{(id) => <input id={id} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} placeholder="Webhook" />}</Field>
          <Field label="URL" wide>
            {(id) => <input id={id} type="url" required value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} placeholder="https://example.com/hooks/salvo" />}
          </Field>
          <Field label="Scope">
            {(id) => (
              <select id={id} value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as typeof scope)}>
                {!isClient && <option value="user">Every campaign of the account</option>}
                {isClient && <option value="client">Every campaign of this client</option>}
                <option value="campaign">One campaign</option>
              </select>
            )}
          </Field>
          {scope === "campaign" && (
            <Field label="Campaign">
              {(id) => (
                <select id={id} required value={campaignId} onChange={(e) => setCampaignId((e.target as HTMLSelectElement).value)}>
                  <option value="">Choose…</option>
                  {(campaigns.data ?? []).map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
        </div>
        <fieldset class="kinds">
          <legend>Events</legend>
          {KINDS.map((k) => (
            <label key={k} class="check">
              <input type="checkbox" checked={kinds.includes(k)} onChange={(e) => setKinds((e.target as HTMLInputElement).checked ? [...kinds, k] : kinds.filter((x) => x !== k))} />
              {k}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={busy}>
          Create webhook
        </button>
      </form>
      {secret && (
        <p class="secret" role="alert">
          Signing secret, shown only now: <code>{secret}</code>
        </p>
      )}
    </Section>
  );
}

function Deliveries({ id }: { id: number }) {
  const deliveries = useLoad(async () => await must(api.GET("/api/v1/webhook/{id}/deliveries", { params: { path: { id } } })), [id]);
  const [redeliver] = useAction(async (deliveryId: number) => {
    await must(api.POST("/api/v1/webhook/{id}/deliveries/{delivery_id}/redeliver", { params: { path: { id, delivery_id: deliveryId } } }));
    await deliveries.reload(true);
    return "Sent again";
  });
  const rows = deliveries.data?.data ?? [];
  return (
    <Section title="Delivery log" actions={<a href={href("webhooks")}>New webhook</a>}>
      {deliveries.error && <Failed error={deliveries.error} />}
      {!deliveries.data ? (
        <Loading what="deliveries" />
      ) : rows.length === 0 ? (
        <p class="muted">Nothing delivered yet.</p>
      ) : (
        <ol class="deliveries">
          {rows.map((d) => (
            <li key={d.id} class="card">
              <p>
                <strong>{d.event_type}</strong> <Badge tone={d.status === "delivered" ? "good" : d.status === "failed" ? "bad" : "warn"}>{d.status}</Badge>{" "}
                <span class="muted small">{when(d.created_at)}</span>{" "}
                {(d.status === "delivered" || d.status === "failed") && (
                  <button type="button" onClick={() => redeliver(d.id)}>
                    Redeliver
                  </button>
                )}
              </p>
              <table>
                <caption class="visually-hidden">Attempts of delivery {d.id}</caption>
                <thead>
                  <tr>
                    <th scope="col">Attempt</th>
                    <th scope="col">When</th>
                    <th scope="col">Answer</th>
                    <th scope="col">Took</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempt_log.map((a, i) => (
                    <tr key={i}>
                      <td>{i + 1}</td>
                      <td>{when(a.attempted_at)}</td>
                      <td>
                        {a.status_code ?? "no answer"} · {a.outcome}
                        {a.error ? ` · ${a.error}` : ""}
                      </td>
                      <td>{a.response_time_ms} ms</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}

