import { render, type FunctionComponent } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { session, signIn, signOut, whoAmI } from "./api";
import { route, href } from "./router";
import { Failed, Loading, Notice, tell } from "./ui";
import "./styles.css";

/** Each screen is its own chunk: the first screen ships only itself (charts load with Analytics). */
const SCREENS: Record<string, { label: string; load: () => Promise<{ default: FunctionComponent<{ path: string[] }> }> }> = {
  inbox: { label: "Inbox", load: () => import("./screens/inbox") },
  campaigns: { label: "Campaigns", load: () => import("./screens/campaigns") },
  mailboxes: { label: "Mailboxes", load: () => import("./screens/mailboxes") },
  analytics: { label: "Analytics", load: () => import("./screens/analytics") },
  webhooks: { label: "Webhooks", load: () => import("./screens/webhooks") },
  deliverability: { label: "Deliverability", load: () => import("./screens/deliverability") },
  sessions: { label: "Sessions", load: () => import("./screens/sessions") },
};

function Screen({ name, path }: { name: string; path: string[] }) {
  const [loaded, setLoaded] = useState<{ name: string; Component: FunctionComponent<{ path: string[] }> } | { name: string; error: string } | null>(null);
  useEffect(() => {
    let live = true;
    SCREENS[name]!.load().then(
      (module) => live && setLoaded({ name, Component: module.default }),
      (error: Error) => live && setLoaded({ name, error: `This screen did not load: ${error.message}` }),
    );
    return () => {
      live = false;
    };
  }, [name]);
  if (!loaded || loaded.name !== name) return <Loading what={SCREENS[name]!.label.toLowerCase()} />;
  if ("error" in loaded) return <Failed error={loaded.error} />;
  return <loaded.Component path={path} />;
}

function SignIn() {
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => input.current?.focus(), []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const key = input.current!.value.trim();
    if (!key) return setError("Paste an account or client API key");
    setBusy(true);
    setError(null);
    try {
      await signIn(key);
      if (!location.hash) location.hash = "#/inbox";
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      // The key leaves the page as soon as it has been sent: it is never stored.
      if (input.current) input.current.value = "";
      setBusy(false);
    }
  };
  return (
    <main class="signin" id="main">
      <form onSubmit={submit} class="card" aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Salvo</h1>
        <p class="muted">Use an account API key, or a client API key to see only that client's campaigns.</p>
        <div class="field">
          <label for="api-key">API key</label>
          <input id="api-key" ref={input} type="password" autoComplete="off" spellcheck={false} placeholder="slv_acct_… or slv_cli_…" aria-describedby={error ? "signin-error" : undefined} />
        </div>
        {error && (
          <p id="signin-error" class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">
          The key is exchanged for a session cookie and is not kept by this browser. API reference: <a href="/docs">/docs</a>.
        </p>
      </form>
    </main>
  );
}

function Shell() {
  const [name = "inbox", ...rest] = route.value;
  const screen = SCREENS[name] ? name : "inbox";
  const who = session.value!;
  const mainRef = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${SCREENS[screen]!.label} · Salvo`;
  }, [screen]);
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), mainRef.current?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Salvo</span>
        <nav aria-label="Screens" class="screens">
          {Object.entries(SCREENS).map(([id, { label }]) => (
            <a key={id} href={href(id)} aria-current={id === screen ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who" title={`Signed in with ${who.key_hint}`}>
          {who.kind === "client" ? `Client ${who.client_id}` : "Account"} · {who.key_hint}
        </span>
        <button type="button" onClick={() => signOut().then(() => tell("Signed out"))}>
          Sign out
        </button>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        <Screen name={screen} path={rest} />
      </main>
    </div>
  );
}

function App() {
  useEffect(() => {
    void whoAmI();
  }, []);
  return (
    <>
      {session.value === undefined ? <Loading what="Salvo" /> : session.value === null ? <SignIn /> : <Shell />}
      <Notice />
    </>
  );
}

render(<App />, document.getElementById("app")!);
