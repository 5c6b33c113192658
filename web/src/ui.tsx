import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { signal } from "@preact/signals";

/** One polite live region for the whole app: screen readers hear each outcome once. */
export const notice = signal<{ text: string; kind: "ok" | "error" } | null>(null);
let noticeTimer: ReturnType<typeof setTimeout> | undefined;

export function tell(text: string, kind: "ok" | "error" = "ok"): void {
  notice.value = { text, kind };
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => (notice.value = null), kind === "error" ? 8000 : 4000);
}

export function Notice() {
  const value = notice.value;
  return (
    <div class={`notice ${value?.kind ?? ""}`} role="status" aria-live="polite">
      {value?.text ?? ""}
    </div>
  );
}

/** Runs an action, says how it went, and keeps the button busy meanwhile. */
export function useAction<A extends unknown[]>(action: (...args: A) => Promise<string | void>) {
  const [busy, setBusy] = useState(false);
  const run = async (...args: A) => {
    setBusy(true);
    try {
      const done = await action(...args);
      if (done) tell(done);
    } catch (error) {
      tell(error instanceof Error ? error.message : String(error), "error");
    } finally {
      setBusy(false);
    }
  };
  return [run, busy] as const;
}

/** Loads on mount and whenever `deps` change; `reload` loads again, `quiet` without the spinner. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const fetchIt = async (quiet = false) => {
    const mine = ++generation.current;
    if (!quiet) setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ ...s, error: error instanceof Error ? error.message : String(error), loading: false }));
    }
  };
  useEffect(() => {
    void fetchIt();
  }, deps);
  return { ...state, reload: fetchIt };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Failed({ error }: { error: string }) {
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

let fieldSequence = 0;
/** A labelled control: the label is always visible and tied to its control. */
export function Field({ label, hint, children, wide }: { label: string; hint?: string; children: (id: string) => JSX.Element; wide?: boolean }) {
  const [id] = useState(() => `f${++fieldSequence}`);
  return (
    <div class={`field${wide ? " wide" : ""}`}>
      <label for={id}>{label}</label>
      {children(id)}
      {hint && <small class="muted">{hint}</small>}
    </div>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions && <div class="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A local datetime input's value as an ISO instant. */
export function isoFromLocal(value: string): string {
  return new Date(value).toISOString();
}

export function Tabs({ tabs, current, label }: { tabs: { id: string; label: string; href: string }[]; current: string; label: string }) {
  return (
    <nav class="tabs" aria-label={label}>
      {tabs.map((tab) => (
        <a key={tab.id} href={tab.href} aria-current={tab.id === current ? "page" : undefined}>
          {tab.label}
        </a>
      ))}
    </nav>
  );
}

/** Statuses in words a person reads, with a colour that is never the only cue. */
export function Badge({ tone, children }: { tone: "good" | "warn" | "bad" | "neutral"; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}
