import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { go, href } from "../router";
import { Badge, Failed, Field, Loading, Section, useAction, useLoad, when } from "../ui";
import { ConnectButtons, ConsentOutcome, startConsent } from "./oauth";

type Mailbox = Schemas["EmailAccount"];

/** A mailbox's health in words: its connection state, with the disconnect's reason or the servers' own messages. */
function health(m: Mailbox): { tone: "good" | "warn" | "bad" | "neutral"; label: string; why?: string } {
  const servers = [m.smtp_failure_error && `SMTP: ${m.smtp_failure_error}`, m.imap_failure_error && `IMAP: ${m.imap_failure_error}`].filter(Boolean).join(" · ");
  if (m.is_suspended) return { tone: "bad", label: "Suspended", why: m.smtp_failure_error ?? "Suspended by hand" };
  if (m.connection_state === "disconnected" || m.needs_reconnect) {
    return { tone: "bad", label: m.needs_reconnect ? "Disconnected: reconnect needed" : "Disconnected", why: m.disconnect_reason?.message ?? servers };
  }
  if (m.connection_state === "failing") return { tone: "warn", label: "Failing, retrying", why: m.disconnect_reason?.message ?? servers };
  if (m.is_smtp_success === false || m.is_imap_success === false) return { tone: "bad", label: "Disconnected", why: servers };
  if (m.connection_state === "unchecked" || m.is_smtp_success === null) return { tone: "neutral", label: "Not checked yet" };
  return { tone: "good", label: "Connected" };
}

/** An OAuth mailbox a person must consent for again. */
function reconnectable(m: Mailbox): boolean {
  return m.auth_type === "OAUTH" && !!m.oauth && (m.needs_reconnect || m.connection_state === "disconnected");
}

/** Its server refused its sending for now: when Salvo tries again, and the server's words. */
function Held({ hold }: { hold: NonNullable<Mailbox["send_hold"]> }) {
  return (
    <div data-testid="mailbox-held">
      <Badge tone="warn">
        {WARNING_LABELS.server_refusing} until {when(hold.until)}
      </Badge>
      <div class="small">{hold.reason}</div>
    </div>
  );
}

function ReconnectButton({ m }: { m: Mailbox }) {
  const [reconnect, busy] = useAction(async () => {
    await startConsent(m.oauth!.provider, { mailboxId: m.id });
    return "Opening the provider's sign-in…";
  });
  return (
    <button type="button" disabled={busy} onClick={() => void reconnect()} aria-label={`Reconnect ${m.from_email}`}>
      Reconnect
    </button>
  );
}

/** How the mailbox signs in, in words. */
function signIn(m: Mailbox): string {
  if (m.auth_type !== "OAUTH" || !m.oauth) return "Password";
  return `OAuth (${m.oauth.provider === "google" ? "Google" : "Microsoft"}${m.oauth.account_kind ? `, ${m.oauth.account_kind}` : ""})`;
}

function check(ok: boolean | null, error: string | null): string {
  if (ok === null) return "not checked yet";
  return ok ? "passed" : `failed: ${error ?? "no reason given"}`;
}

export default function Mailboxes({ path }: { path: string[] }) {
  const [id] = path;
  const list = useLoad(async () => await must(api.GET("/api/v1/email-accounts")), []);
  return (
    <>
      <h1>Mailboxes</h1>
      <ConsentOutcome onSettled={() => list.reload(true)} />
      <Section title="Health">
        {list.error && <Failed error={list.error} />}
        {!list.data ? (
          <Loading what="mailboxes" />
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Mailbox</th>
                  <th scope="col">Health</th>
                  <th scope="col">SMTP check</th>
                  <th scope="col">IMAP check</th>
                  <th scope="col">Sent today / cap</th>
                  <th scope="col">Warmup</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((m) => {
                  const h = health(m);
                  return (
                    <tr key={m.id}>
                      <td>
                        <a href={href("mailboxes", m.id)}>{m.from_email}</a>
                        <div class="small muted">
                          {m.from_name} · {signIn(m)}
                        </div>
                      </td>
                      <td data-testid="mailbox-health">
                        <Badge tone={h.tone}>{h.label}</Badge>
                        {h.why && <div class="small">{h.why}</div>}
                        {reconnectable(m) && <ReconnectButton m={m} />}
                        {m.send_hold && <Held hold={m.send_hold} />}
                      </td>
                      <td class="small">{check(m.is_smtp_success, m.smtp_failure_error)}</td>
                      <td class="small">{check(m.is_imap_success, m.imap_failure_error)}</td>
                      <td>
                        {m.daily_sent_count} / {m.message_per_day}
                      </td>
                      <td>{m.warmup_details.status === "ACTIVE" ? "On" : "Off"}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {list.data.length === 0 && <p class="muted">No mailboxes yet: add one below.</p>}
          </div>
        )}
      </Section>
      {id ? <MailboxDetail key={id} id={Number(id)} onChange={() => list.reload(true)} /> : <AddMailbox onAdded={() => list.reload(true)} />}
    </>
  );
}

function AddMailbox({ onAdded }: { onAdded: () => Promise<void> }) {
  const [form, setForm] = useState({
    from_name: "",
    from_email: "",
    user_name: "",
    password: "",
    smtp_host: "",
    smtp_port: "587",
    smtp_port_type: "STARTTLS",
    imap_host: "",
    imap_port: "993",
    imap_port_type: "SSL",
    max_email_per_day: "100",
    time_to_wait_in_mins: "0",
  });
  const set = (key: keyof typeof form) => (e: Event) => setForm({ ...form, [key]: (e.target as HTMLInputElement).value });
  const [save, busy] = useAction(async () => {
    const saved = await must(
      api.POST("/api/v1/email-accounts/save", {
        body: {
          from_name: form.from_name,
          from_email: form.from_email,
          ...(form.user_name ? { user_name: form.user_name } : {}),
          password: form.password,
          smtp_host: form.smtp_host,
          smtp_port: Number(form.smtp_port),
          smtp_port_type: form.smtp_port_type as "SSL" | "TLS" | "STARTTLS",
          imap_host: form.imap_host,
          imap_port: Number(form.imap_port),
          imap_port_type: form.imap_port_type as "SSL" | "TLS" | "STARTTLS",
          max_email_per_day: Number(form.max_email_per_day),
          time_to_wait_in_mins: Number(form.time_to_wait_in_mins),
        },
      }),
    );
    setForm({ ...form, password: "" });
    await onAdded();
    go("mailboxes", saved.id);
    return `${form.from_email} saved: its connection check runs now`;
  });
  const port = (label: string, key: "smtp_port_type" | "imap_port_type") => (
    <Field label={label}>
      {(id) => (
        <select id={id} value={form[key]} onChange={set(key)}>
          <option value="SSL">SSL (implicit TLS)</option>
          <option value="STARTTLS">STARTTLS</option>
          <option value="TLS">TLS</option>
        </select>
      )}
    </Field>
  );
  return (
    <>
      <ConnectButtons />
      <Section title="Add a mailbox (SMTP and IMAP)">
        <form onSubmit={(e) => (e.preventDefault(), void save())}>
          <div class="grid3">
            <Field label="From name">{(id) => <input id={id} required value={form.from_name} onInput={set("from_name")} />}</Field>
            <Field label="From email">{(id) => <input id={id} type="email" required value={form.from_email} onInput={set("from_email")} />}</Field>
            <Field label="Login (default: the email)">{(id) => <input id={id} value={form.user_name} onInput={set("user_name")} autoComplete="off" />}</Field>
            <Field label="Password or app password">{(id) => <input id={id} type="password" required value={form.password} onInput={set("password")} autoComplete="new-password" />}</Field>
            <Field label="SMTP host">{(id) => <input id={id} required value={form.smtp_host} onInput={set("smtp_host")} placeholder="smtp.example.com" />}</Field>
            <Field label="SMTP port">{(id) => <input id={id} type="number" required min={1} max={65535} value={form.smtp_port} onInput={set("smtp_port")} />}</Field>
            {port("SMTP security", "smtp_port_type")}
            <Field label="IMAP host">{(id) => <input id={id} required value={form.imap_host} onInput={set("imap_host")} placeholder="imap.example.com" />}</Field>
            <Field label="IMAP port">{(id) => <input id={id} type="number" required min={1} max={65535} value={form.imap_port} onInput={set("imap_port")} />}</Field>
            {port("IMAP security", "imap_port_type")}
            <Field label="Emails per day (cap)">{(id) => <input id={id} type="number" min={1} max={10000} value={form.max_email_per_day} onInput={set("max_email_per_day")} />}</Field>
            <Field label="Minutes between emails">{(id) => <input id={id} type="number" min={0} max={1440} value={form.time_to_wait_in_mins} onInput={set("time_to_wait_in_mins")} />}</Field>
          </div>
          <button type="submit" class="primary" disabled={busy}>
            Save mailbox
          </button>
        </form>
      </Section>
    </>
  );
}

/** What each warning is about, in a word or two beside its message (the API's `sending_status.warnings`). */
const WARNING_LABELS: Record<string, string> = {
  server_refusing: "Server refusing",
  unconfirmed_sends: "Emails in doubt",
  warmup_spam_high: "Warmup in spam",
  warmup_blocked: "Warmup blocked",
  warmup_waiting_for_pool: "Warmup waiting",
};

/** How a mailbox's `sending_status.code` reads at a glance: what needs a person is bad, its server's hold a warning, waiting for time neutral. */
const SENDING_TONES: Record<string, "good" | "warn" | "bad"> = {
  sending: "good",
  suspended: "bad",
  needs_reconnect: "bad",
  connection_failing: "bad",
  server_refusing: "warn",
};

/** Why the mailbox sends or not, when it next may, and what its owner should know besides. */
function Sending({ status }: { status: NonNullable<Mailbox["sending_status"]> }) {
  return (
    <div class="wide">
      <dt>Sending</dt>
      <dd data-testid="mailbox-sending">
        <Badge tone={SENDING_TONES[status.code] ?? "neutral"}>{status.message}</Badge>
        {status.next_send_at && ` next at ${when(status.next_send_at)}`}
        {status.warnings.map((warning) => (
          <div class="small" key={warning.code}>
            <Badge tone="warn">{WARNING_LABELS[warning.code] ?? warning.code}</Badge> {warning.message}
          </div>
        ))}
      </dd>
    </div>
  );
}

function MailboxDetail({ id, onChange }: { id: number; onChange: () => Promise<void> }) {
  const mailbox = useLoad(async () => await must(api.GET("/api/v1/email-accounts/{id}", { params: { path: { id } } })), [id]);
  const stats = useLoad(async () => await must(api.GET("/api/v1/email-accounts/{id}/warmup-stats", { params: { path: { id } } })), [id]);
  const m = mailbox.data;
  const [suspend] = useAction(async () => {
    if (m!.is_suspended) await must(api.DELETE("/api/v1/email-accounts/unsuspend/{id}", { params: { path: { id } } }));
    else await must(api.PUT("/api/v1/email-accounts/suspend/{id}", { params: { path: { id } } }));
    await mailbox.reload(true);
    await onChange();
    return m!.is_suspended ? "Unsuspended" : "Suspended";
  });
  const [recheck] = useAction(async () => {
    await must(api.POST("/api/v1/email-accounts/reconnect-failed-email-accounts", { body: { email_account_ids: [id] } }));
    return "Connection check queued";
  });
  const [warm, setWarm] = useState<{ on: boolean; perDay: string; rampup: string; replyRate: string } | null>(null);
  const w = m?.warmup_details;
  const warmForm = warm ?? (w ? { on: w.status === "ACTIVE", perDay: String(w.total_warmup_per_day), rampup: String(w.daily_rampup), replyRate: String(w.reply_rate_percentage) } : null);
  const [saveWarmup] = useAction(async () => {
    const f = warmForm!;
    await must(
      api.POST("/api/v1/email-accounts/{id}/warmup", {
        params: { path: { id } },
        body: { warmup_enabled: f.on, total_warmup_per_day: Number(f.perDay), daily_rampup: Number(f.rampup), reply_rate_percentage: Number(f.replyRate) },
      }),
    );
    await mailbox.reload(true);
    await stats.reload(true);
    await onChange();
    return "Warmup settings saved";
  });
  if (mailbox.error) return <Failed error={mailbox.error} />;
  if (!m || !warmForm) return <Loading what="the mailbox" />;
  const h = health(m);
  const daily = (stats.data as { daily_stats?: { date: string; sent: number; spam: number; delivered: number; replied: number }[] } | undefined)?.daily_stats ?? [];
  return (
    <>
      <Section
        title={m.from_email}
        actions={
          <>
            {reconnectable(m) && <ReconnectButton m={m} />}
            <button type="button" onClick={() => recheck()}>
              Check connection again
            </button>
            <button type="button" onClick={() => suspend()}>
              {m.is_suspended ? "Unsuspend" : "Suspend"}
            </button>
            <a href={href("mailboxes")}>Add another mailbox</a>
          </>
        }
      >
        <dl class="facts">
          <div>
            <dt>Health</dt>
            <dd>
              <Badge tone={h.tone}>{h.label}</Badge> {h.why}
            </dd>
          </div>
          {m.sending_status && <Sending status={m.sending_status} />}
          <div>
            <dt>Signs in with</dt>
            <dd>
              {signIn(m)}
              {m.oauth?.last_refresh_at ? ` · token refreshed ${when(m.oauth.last_refresh_at)}` : ""}
            </dd>
          </div>
          <div>
            <dt>SMTP</dt>
            <dd>
              {m.smtp_host}:{m.smtp_port} ({m.smtp_port_type}) · check {check(m.is_smtp_success, m.smtp_failure_error)}
            </dd>
          </div>
          <div>
            <dt>IMAP</dt>
            <dd>
              {m.imap_host}:{m.imap_port} ({m.imap_port_type}) · check {check(m.is_imap_success, m.imap_failure_error)}
            </dd>
          </div>
          <div>
            <dt>Today</dt>
            <dd>
              {m.daily_sent_count} sent of a cap of {m.message_per_day} a day; at least {m.time_to_wait_in_mins} minutes between emails
            </dd>
          </div>
          <div>
            <dt>Campaigns</dt>
            <dd>{m.campaign_count}</dd>
          </div>
          <div>
            <dt>Updated</dt>
            <dd>{when(m.updated_at)}</dd>
          </div>
        </dl>
      </Section>
      <Section title="Warmup">
        <form onSubmit={(e) => (e.preventDefault(), void saveWarmup())}>
          <label class="check">
            <input type="checkbox" checked={warmForm.on} onChange={(e) => setWarm({ ...warmForm, on: (e.target as HTMLInputElement).checked })} /> Warm this mailbox up
          </label>
          <div class="grid3">
            <Field label="Warmup emails per day">{(fid) => <input id={fid} type="number" min={1} max={250} value={warmForm.perDay} onInput={(e) => setWarm({ ...warmForm, perDay: (e.target as HTMLInputElement).value })} />}</Field>
            <Field label="Daily ramp-up">{(fid) => <input id={fid} type="number" min={0} max={100} value={warmForm.rampup} onInput={(e) => setWarm({ ...warmForm, rampup: (e.target as HTMLInputElement).value })} />}</Field>
            <Field label="Reply rate (%)">{(fid) => <input id={fid} type="number" min={0} max={100} value={warmForm.replyRate} onInput={(e) => setWarm({ ...warmForm, replyRate: (e.target as HTMLInputElement).value })} />}</Field>
          </div>
          <button type="submit">Save warmup settings</button>
        </form>
        <p class="small">
          Sent {w!.total_sent_count} warmup emails, {w!.total_spam_count} landed in spam; reputation {w!.warmup_reputation ?? "not known yet"}
          {w!.is_warmup_blocked ? ` · blocked: ${w!.blocked_reason ?? ""}` : ""}.
        </p>
        <div class="table-wrap">
          <table>
            <caption>Warmup, last days (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Sent</th>
                <th scope="col">Inbox</th>
                <th scope="col">Spam</th>
                <th scope="col">Replies</th>
              </tr>
            </thead>
            <tbody>
              {daily.map((d) => (
                <tr key={d.date}>
                  <td>{d.date}</td>
                  <td>{d.sent}</td>
                  <td>{d.delivered}</td>
                  <td>{d.spam}</td>
                  <td>{d.replied}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>
    </>
  );
}
