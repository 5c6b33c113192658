import { useEffect, useRef, useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { go, href } from "../router";
import { Badge, Failed, Field, isoFromLocal, Loading, tell, useAction, useLoad, when } from "../ui";

type Message = Schemas["InboxMessage"];
type Category = { id: number; name: string; sentiment_type?: string | null };

/** The master inbox views (contract sections 4 and 15), each its own listing route. */
const VIEWS = {
  replies: { label: "All replies", path: "/api/v1/master-inbox/inbox-replies" },
  unread: { label: "Unread", path: "/api/v1/master-inbox/unread-replies" },
  important: { label: "Important", path: "/api/v1/master-inbox/important" },
  snoozed: { label: "Snoozed", path: "/api/v1/master-inbox/snoozed" },
  archived: { label: "Archived", path: "/api/v1/master-inbox/archived" },
  reminders: { label: "Reminders", path: "/api/v1/master-inbox/reminders" },
  scheduled: { label: "Scheduled", path: "/api/v1/master-inbox/scheduled" },
  sent: { label: "Sent", path: "/api/v1/master-inbox/sent" },
} as const;
type View = keyof typeof VIEWS;

const PAGE = 20;
/** New replies show up without a reload: the open view is read again this often while the tab is visible. */
const POLL_MS = 4000;
const STATUSES = ["Opened", "Clicked", "Replied", "Unsubscribed", "Bounced", "Accepted", "Not Replied"] as const;

function leadName(m: Message): string {
  const name = [m.lead.first_name, m.lead.last_name].filter(Boolean).join(" ");
  return name || m.lead.email;
}

/** Reply bodies are HTML from strangers: shown as text (parsed inertly, never inserted as markup). */
function asText(html: string | null | undefined): string {
  if (!html) return "";
  const doc = new DOMParser().parseFromString(html.replace(/<br\s*\/?>/gi, "\n").replace(/<\/p>/gi, "\n\n"), "text/html");
  return (doc.body.textContent ?? "").replace(/\n{3,}/g, "\n\n").trim();
}

interface Filters {
  search: string;
  campaignId: string;
  category: string;
  status: string;
}

export default function Inbox({ path }: { path: string[] }) {
  const [viewName = "replies", openId] = path;
  const view: View = viewName in VIEWS ? (viewName as View) : "replies";
  const [filters, setFilters] = useState<Filters>({ search: "", campaignId: "", category: "", status: "" });
  const [offset, setOffset] = useState(0);
  const searchRef = useRef<HTMLInputElement>(null);

  const categories = useLoad(async () => (await must(api.GET("/api/v1/leads/fetch-categories"))) as Category[], []);
  const campaigns = useLoad(async () => await must(api.GET("/api/v1/campaigns")), []);

  const listing = useLoad(async () => {
    const f: Schemas["InboxFilters"] = {};
    if (filters.search.trim()) f.search = filters.search.trim();
    if (filters.campaignId) f.campaignId = Number(filters.campaignId);
    if (filters.status) f.emailStatus = filters.status as (typeof STATUSES)[number];
    if (filters.category === "none") f.leadCategories = { unassigned: true };
    else if (filters.category) f.leadCategories = { categoryIdsIn: [Number(filters.category)] };
    const body = { offset, limit: PAGE, filters: f };
    return await must(api.POST(VIEWS[view].path, { body }));
  }, [view, filters, offset]);

  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void listing.reload(true);
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [view, filters, offset]);

  const messages = listing.data?.messages ?? [];
  const openIndex = messages.findIndex((m) => String(m.email_lead_map_id) === openId);

  // Keyboard: j/k move, o/Enter open, / search, ? help. Inside a field the keys type as usual.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (event.ctrlKey || event.metaKey || event.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) || target.isContentEditable) return;
      const move = (by: number) => {
        const next = messages[Math.max(0, Math.min(messages.length - 1, (openIndex < 0 ? -1 : openIndex) + by))];
        if (next) go("inbox", view, next.email_lead_map_id);
      };
      if (event.key === "j") move(1);
      else if (event.key === "k") move(-1);
      else if (event.key === "/") {
        event.preventDefault();
        searchRef.current?.focus();
      } else if (event.key === "?") tell("Shortcuts: j/k next/previous, / search, r reply, e archive, u read/unread, s important, c categorise");
      else return;
      event.preventDefault();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [messages, openIndex, view]);

  const setFilter = (key: keyof Filters) => (event: Event) => {
    setOffset(0);
    setFilters({ ...filters, [key]: (event.target as HTMLInputElement).value });
  };
  const total = listing.data?.total_count ?? 0;

  return (
    <div class="inbox">
      <h1 class="visually-hidden">Inbox</h1>
      <nav class="views" aria-label="Inbox views">
        {(Object.keys(VIEWS) as View[]).map((id) => (
          <a key={id} href={href("inbox", id)} aria-current={id === view ? "page" : undefined} onClick={() => setOffset(0)}>
            {VIEWS[id].label}
          </a>
        ))}
      </nav>
      <section class="list-pane" aria-label="Conversations">
        <form class="inbox-filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <Field label="Search">{(id) => <input id={id} ref={searchRef} type="search" value={filters.search} onChange={setFilter("search")} placeholder="Name, email or reply text" maxLength={100} />}</Field>
          <Field label="Campaign">
            {(id) => (
              <select id={id} value={filters.campaignId} onChange={setFilter("campaignId")}>
                <option value="">All campaigns</option>
                {(campaigns.data ?? []).map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Category">
            {(id) => (
              <select id={id} value={filters.category} onChange={setFilter("category")}>
                <option value="">Any category</option>
                <option value="none">Uncategorised</option>
                {(categories.data ?? []).map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Email status">
            {(id) => (
              <select id={id} value={filters.status} onChange={setFilter("status")}>
                <option value="">Any status</option>
                {STATUSES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            )}
          </Field>
        </form>
        {listing.error && <Failed error={listing.error} />}
        {listing.loading && !listing.data ? (
          <Loading what="conversations" />
        ) : (
          <>
            <p class="muted small" aria-live="polite">
              {total} conversation{total === 1 ? "" : "s"}
            </p>
            <ul class="conversations">
              {messages.map((m) => (
                <li key={m.email_lead_map_id} class={`${m.is_read ? "" : "unread"} ${String(m.email_lead_map_id) === openId ? "open" : ""}`}>
                  <a href={href("inbox", view, m.email_lead_map_id)} aria-current={String(m.email_lead_map_id) === openId ? "true" : undefined}>
                    <span class="who">
                      {!m.is_read && <span class="visually-hidden">Unread: </span>}
                      {leadName(m)}
                      {m.is_important && <span aria-label="important"> ★</span>}
                    </span>
                    <span class="muted small">{m.campaign.name}</span>
                    <span class="small">
                      {categoryName(categories.data, m.lead_category_id)} · {when(m.last_reply_time ?? m.last_sent_time)}
                    </span>
                  </a>
                </li>
              ))}
            </ul>
            {messages.length === 0 && <p class="muted">Nothing here.</p>}
            <div class="pager">
              <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Newer
              </button>
              <span class="small muted">
                {total ? `${offset + 1}–${Math.min(offset + PAGE, total)} of ${total}` : ""}
              </span>
              <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>
                Older
              </button>
            </div>
          </>
        )}
      </section>
      <section class="thread-pane" aria-label="Conversation">
        {openId ? (
          <Conversation key={openId} id={Number(openId)} categories={categories.data ?? []} onChange={() => listing.reload(true)} />
        ) : (
          <p class="muted">Choose a conversation. Press ? for keyboard shortcuts.</p>
        )}
      </section>
    </div>
  );
}

function categoryName(categories: Category[] | undefined, id: number | null): string {
  if (id === null) return "Uncategorised";
  return categories?.find((c) => c.id === id)?.name ?? `Category ${id}`;
}

function Conversation({ id, categories, onChange }: { id: number; categories: Category[]; onChange: () => void }) {
  const thread = useLoad(async () => (await must(api.GET("/api/v1/master-inbox/{email_lead_map_id}", { params: { path: { email_lead_map_id: id } } }))).data, [id]);
  const replyRef = useRef<HTMLTextAreaElement>(null);
  const categoryRef = useRef<HTMLSelectElement>(null);
  const m = thread.data;

  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === "visible" && thread.reload(true), POLL_MS * 2);
    return () => clearInterval(timer);
  }, [id]);

  const changed = async (what: string) => {
    await thread.reload(true);
    onChange();
    return what;
  };
  const body = { email_lead_map_id: id };
  const [toggleRead] = useAction(async () => {
    await must(api.PATCH("/api/v1/master-inbox/change-read-status", { body: { ...body, read_status: !m!.is_read } }));
    return changed(m!.is_read ? "Marked unread" : "Marked read");
  });
  const [toggleImportant] = useAction(async () => {
    await must(api.PATCH("/api/v1/master-inbox/mark-important", { body: { ...body, is_important: !m!.is_important } }));
    return changed(m!.is_important ? "No longer important" : "Marked important");
  });
  const [archive] = useAction(async () => {
    await must(api.POST(m!.is_archived ? "/api/v1/master-inbox/unarchive" : "/api/v1/master-inbox/archive", { body }));
    return changed(m!.is_archived ? "Back in the inbox" : "Archived");
  });
  const [categorise] = useAction(async (value: string) => {
    await must(api.PATCH("/api/v1/master-inbox/update-category", { body: { ...body, category_id: value ? Number(value) : null } }));
    return changed(value ? `Categorised as ${categoryName(categories, Number(value))}` : "Category cleared");
  });

  // Mark read on open, as a mail client does.
  useEffect(() => {
    if (m && !m.is_read) void api.PATCH("/api/v1/master-inbox/change-read-status", { body: { ...body, read_status: true } }).then(onChange);
  }, [m?.email_lead_map_id]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (!m || event.ctrlKey || event.metaKey || event.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
      if (event.key === "r") replyRef.current?.focus();
      else if (event.key === "e") void archive();
      else if (event.key === "u") void toggleRead();
      else if (event.key === "s") void toggleImportant();
      else if (event.key === "c") categoryRef.current?.focus();
      else return;
      event.preventDefault();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [m]);

  if (thread.error && !m) return <Failed error={thread.error} />;
  if (!m) return <Loading what="the conversation" />;
  const history = m.email_history ?? [];
  const lastReply = [...history].reverse().find((h) => h.type === "REPLY") ?? history[history.length - 1];

  return (
    <article class="conversation" aria-labelledby="conversation-title">
      <header class="conversation-head">
        <div>
          <h2 id="conversation-title">{leadName(m)}</h2>
          <p class="muted small">
            {m.lead.email} · <a href={href("campaigns", m.campaign.id)}>{m.campaign.name}</a> · {m.email_status ?? "—"}
            {m.is_snoozed && ` · snoozed until ${when(m.snoozed_until)}`}
          </p>
        </div>
        <div class="actions">
          <label class="visually-hidden" for="category">
            Category of this conversation
          </label>
          <select id="category" ref={categoryRef} value={m.lead_category_id ?? ""} onChange={(e) => categorise((e.target as HTMLSelectElement).value)}>
            <option value="">Uncategorised</option>
            {categories.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
          <button type="button" onClick={() => toggleRead()} aria-keyshortcuts="u">
            {m.is_read ? "Mark unread" : "Mark read"}
          </button>
          <button type="button" onClick={() => toggleImportant()} aria-pressed={m.is_important} aria-keyshortcuts="s">
            {m.is_important ? "★ Important" : "☆ Important"}
          </button>
          <button type="button" onClick={() => archive()} aria-keyshortcuts="e">
            {m.is_archived ? "Unarchive" : "Archive"}
          </button>
        </div>
      </header>
      <ol class="thread" aria-label="Messages, oldest first">
        {history.map((h) => (
          <li key={h.stats_id} class={h.type === "REPLY" ? "reply" : "sent"}>
            <p class="meta small">
              <strong>{h.type === "REPLY" ? "Reply" : `Sent · step ${h.sequence_number ?? "—"}`}</strong> · {h.from ?? ""} → {h.to ?? ""} · {when(h.time)}
              {h.ignored && <Badge tone="neutral">ignored</Badge>}
            </p>
            {h.subject && <p class="subject">{h.subject}</p>}
            <div class="body">{asText(h.email_body)}</div>
          </li>
        ))}
      </ol>
      <Reply campaignId={m.campaign.id} answers={lastReply} textRef={replyRef} onSent={() => changed("")} />
      <div class="grid2">
        <Snooze id={id} snoozed={m.is_snoozed} onDone={changed} />
        <Reminder id={id} current={m.reminder_time ?? null} onDone={changed} />
      </div>
      <div class="grid2">
        <Tasks id={id} />
        <Notes id={id} leadId={m.lead.id} />
      </div>
    </article>
  );
}

interface Attachment {
  file_url: string;
  file_name: string;
}

function Reply({ campaignId, answers, textRef, onSent }: { campaignId: number; answers?: { stats_id: string; message_id: string | null }; textRef: { current: HTMLTextAreaElement | null }; onSent: () => void }) {
  const [text, setText] = useState("");
  const [later, setLater] = useState("");
  const [cc, setCc] = useState("");
  const [attachments, setAttachments] = useState<Attachment[]>([]);
  const [send, busy] = useAction(async () => {
    if (!answers) throw new Error("This conversation has no message to answer");
    if (!text.trim()) throw new Error("Write the reply first");
    const html = text
      .split(/\n/)
      .map((line) => line.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!))
      .join("<br>");
    await must(
      api.POST("/api/v1/campaigns/{campaign_id}/reply-email-thread", {
        params: { path: { campaign_id: campaignId } },
        body: {
          email_stats_id: answers.stats_id,
          ...(answers.message_id ? { reply_message_id: answers.message_id } : {}),
          email_body: html,
          add_signature: false,
          ...(later ? { scheduled_time: isoFromLocal(later) } : {}),
          ...(cc.trim() ? { cc: cc.trim() } : {}),
          ...(attachments.length ? { attachments: attachments.filter((a) => a.file_url.trim()).map((a) => ({ file_url: a.file_url.trim(), file_name: a.file_name.trim() || undefined })) } : {}),
        },
      }),
    );
    setText("");
    setLater("");
    setAttachments([]);
    onSent();
    return later ? `Reply scheduled for ${when(isoFromLocal(later))}` : "Reply queued: it goes out within a minute";
  });
  return (
    <form
      class="reply card"
      aria-label="Reply to this conversation"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <Field label="Reply" wide>
        {(id) => <textarea id={id} ref={textRef} rows={5} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} aria-keyshortcuts="r" />}
      </Field>
      <div class="grid3">
        <Field label="Send later (optional)">{(id) => <input id={id} type="datetime-local" value={later} onInput={(e) => setLater((e.target as HTMLInputElement).value)} />}</Field>
        <Field label="Cc (optional)">{(id) => <input id={id} type="text" value={cc} onInput={(e) => setCc((e.target as HTMLInputElement).value)} placeholder="a@example.com, b@example.com" />}</Field>
      </div>
      <fieldset class="attachments">
        <legend>Attachments (https links, fetched when the reply is sent; up to 5)</legend>
        {attachments.map((a, i) => (
          <div class="grid3" key={i}>
            <Field label={`Attachment ${i + 1} URL`}>
              {(id) => <input id={id} type="url" required value={a.file_url} onInput={(e) => setAttachments(attachments.map((x, j) => (j === i ? { ...x, file_url: (e.target as HTMLInputElement).value } : x)))} />}
            </Field>
            <Field label={`Attachment ${i + 1} name`}>
              {(id) => <input id={id} type="text" value={a.file_name} onInput={(e) => setAttachments(attachments.map((x, j) => (j === i ? { ...x, file_name: (e.target as HTMLInputElement).value } : x)))} />}
            </Field>
            <button type="button" onClick={() => setAttachments(attachments.filter((_, j) => j !== i))}>
              Remove attachment {i + 1}
            </button>
          </div>
        ))}
        {attachments.length < 5 && (
          <button type="button" onClick={() => setAttachments([...attachments, { file_url: "", file_name: "" }])}>
            Add an attachment
          </button>
        )}
      </fieldset>
      <button type="submit" class="primary" disabled={busy}>
        {busy ? "Sending…" : later ? "Schedule reply" : "Send reply"}
      </button>
    </form>
  );
}

function Snooze({ id, snoozed, onDone }: { id: number; snoozed: boolean; onDone: (what: string) => Promise<string> }) {
  const [until, setUntil] = useState("");
  const [snooze] = useAction(async () => {
    if (snoozed) {
      await must(api.POST("/api/v1/master-inbox/unsnooze", { body: { email_lead_map_id: id } }));
      return onDone("Back in the inbox");
    }
    if (!until) throw new Error("Choose when it comes back");
    await must(api.POST("/api/v1/master-inbox/snooze", { body: { email_lead_map_id: id, snoozed_until: isoFromLocal(until) } }));
    return onDone(`Snoozed until ${when(isoFromLocal(until))}`);
  });
  return (
    <form class="card" aria-label="Snooze" onSubmit={(e) => (e.preventDefault(), void snooze())}>
      <h3>Snooze</h3>
      {!snoozed && <Field label="Until">{(fid) => <input id={fid} type="datetime-local" value={until} onInput={(e) => setUntil((e.target as HTMLInputElement).value)} />}</Field>}
      <button type="submit">{snoozed ? "Unsnooze" : "Snooze"}</button>
    </form>
  );
}

function Reminder({ id, current, onDone }: { id: number; current: string | null; onDone: (what: string) => Promise<string> }) {
  const [at, setAt] = useState("");
  const [message, setMessage] = useState("");
  const [save] = useAction(async () => {
    if (!at || !message.trim()) throw new Error("A reminder needs a time and a message");
    await must(api.POST("/api/v1/master-inbox/set-reminder", { body: { email_lead_map_id: id, reminder_time: isoFromLocal(at), message: message.trim() } }));
    setMessage("");
    return onDone(`Reminder set for ${when(isoFromLocal(at))}`);
  });
  return (
    <form class="card" aria-label="Reminder" onSubmit={(e) => (e.preventDefault(), void save())}>
      <h3>Reminder</h3>
      {current && <p class="small">Current: {when(current)}</p>}
      <Field label="When">{(fid) => <input id={fid} type="datetime-local" value={at} onInput={(e) => setAt((e.target as HTMLInputElement).value)} />}</Field>
      <Field label="Message">{(fid) => <input id={fid} type="text" maxLength={1000} value={message} onInput={(e) => setMessage((e.target as HTMLInputElement).value)} />}</Field>
      <button type="submit">Set reminder</button>
    </form>
  );
}

function Tasks({ id }: { id: number }) {
  const tasks = useLoad(async () => (await must(api.GET("/api/v1/master-inbox/tasks", { params: { query: { email_lead_map_id: id } } }))).data, [id]);
  const [name, setName] = useState("");
  const [due, setDue] = useState("");
  const [priority, setPriority] = useState<"LOW" | "MEDIUM" | "HIGH">("MEDIUM");
  const [add] = useAction(async () => {
    if (!name.trim()) throw new Error("Name the task");
    await must(api.POST("/api/v1/master-inbox/create-task", { body: { email_lead_map_id: id, name: name.trim(), priority, ...(due ? { due_date: isoFromLocal(due) } : {}) } }));
    setName("");
    setDue("");
    await tasks.reload(true);
    return "Task added";
  });
  return (
    <form class="card" aria-label="Tasks" onSubmit={(e) => (e.preventDefault(), void add())}>
      <h3>Tasks</h3>
      <ul class="plain">
        {(tasks.data ?? []).map((t) => (
          <li key={t.task_id}>
            {t.name} <span class="muted small">· {t.priority.toLowerCase()} · due {when(t.due_date)}</span>
          </li>
        ))}
      </ul>
      <Field label="New task">{(fid) => <input id={fid} type="text" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />}</Field>
      <div class="grid2">
        <Field label="Due">{(fid) => <input id={fid} type="datetime-local" value={due} onInput={(e) => setDue((e.target as HTMLInputElement).value)} />}</Field>
        <Field label="Priority">
          {(fid) => (
            <select id={fid} value={priority} onChange={(e) => setPriority((e.target as HTMLSelectElement).value as typeof priority)}>
              <option value="LOW">Low</option>
              <option value="MEDIUM">Medium</option>
              <option value="HIGH">High</option>
            </select>
          )}
        </Field>
      </div>
      <button type="submit">Add task</button>
    </form>
  );
}

function Notes({ id, leadId }: { id: number; leadId: number }) {
  const notes = useLoad(async () => (await must(api.GET("/api/v1/crm/leads/notes/{lead_id}", { params: { path: { lead_id: leadId } } }))).data, [leadId]);
  const [text, setText] = useState("");
  const [add] = useAction(async () => {
    if (!text.trim()) throw new Error("Write the note first");
    await must(api.POST("/api/v1/master-inbox/create-note", { body: { email_lead_map_id: id, note_message: text.trim() } }));
    setText("");
    await notes.reload(true);
    return "Note added";
  });
  return (
    <form class="card" aria-label="Notes" onSubmit={(e) => (e.preventDefault(), void add())}>
      <h3>Notes</h3>
      <ul class="plain">
        {(notes.data ?? []).map((n) => (
          <li key={n.id}>
            {n.note_message} <span class="muted small">· {when(n.created_at)}</span>
          </li>
        ))}
      </ul>
      <Field label="New note">{(fid) => <textarea id={fid} rows={2} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />}</Field>
      <button type="submit">Add note</button>
    </form>
  );
}
