// Connecting Google and Microsoft mailboxes by OAuth (CONTRACT 18.3): the app asks for a consent URL
// with its own address as `redirect_url`, sends the browser there, and when Salvo's callback sends it
// back with `session_id`, `status` and `error`, reads the session and says how it ended.
import { useEffect, useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Badge, Field, Section, useAction } from "../ui";

type Provider = "google" | "microsoft";
type OAuthSession = Schemas["OAuthSession"];

const PROVIDERS: Record<Provider, string> = { google: "Google", microsoft: "Microsoft" };

/** Each session error in words a person can act on. */
const ERRORS: Record<string, string> = {
  access_denied: "The consent was declined at the provider, so nothing was connected.",
  provider_error: "The provider refused the consent",
  expired: "The consent took too long and expired: start again.",
  token_exchange_failed: "Salvo could not exchange the provider's answer for tokens: try again, and check the OAuth app's secret if it keeps failing.",
  no_refresh_token: "The provider gave no refresh token, so Salvo could not keep the mailbox connected: remove the app's access in the account's security settings and connect again.",
  scope_missing: "Mail access was not allowed: connect again and leave the mail permission ticked.",
  email_unverified: "The provider has not verified that address, so it cannot be connected.",
  address_in_use: "That address is already connected as a mailbox you cannot see.",
  address_mismatch: "The account signed in at the provider is not the mailbox's address: sign in with that address.",
  oauth_app_missing: "No OAuth app is configured for this provider.",
};

export function oauthError(code: string | null, description?: string | null): string {
  const words = (code && ERRORS[code]) ?? `The connection failed${code ? ` (${code})` : ""}.`;
  return description ? `${words.replace(/\.$/, "")}: ${description}` : words;
}

/** Where the provider's consent sends the browser back to: this screen of this app. */
function returnUrl(): string {
  return `${location.origin}${location.pathname}#/mailboxes`;
}

/** Starts a consent (new, or again for a disconnected mailbox) and leaves the page for the provider's. */
export async function startConsent(provider: Provider, options: { email?: string; mailboxId?: number }): Promise<void> {
  const started =
    options.mailboxId !== undefined
      ? await must(api.POST("/api/v1/email-accounts/{id}/oauth/reconnect", { params: { path: { id: options.mailboxId } }, body: { redirect_url: returnUrl() } }))
      : await must(
          api.POST("/api/v1/email-accounts/oauth/{provider}/init", {
            params: { path: { provider } },
            body: { redirect_url: returnUrl(), ...(options.email ? { email: options.email } : {}) },
          }),
        );
  location.assign(started.auth_url);
}

export function ConnectButtons() {
  const [email, setEmail] = useState("");
  const [connect, busy] = useAction(async (provider: Provider) => {
    await startConsent(provider, { email: email.trim() || undefined });
    return `Opening ${PROVIDERS[provider]}'s sign-in…`;
  });
  return (
    <Section title="Connect with Google or Microsoft">
      <form class="oauth-connect" data-slot="oauth-connect" onSubmit={(e) => e.preventDefault()}>
        <p class="muted small">Gmail and Google Workspace, Outlook.com and Microsoft 365: sign in at the provider and allow mail access. No password is stored; the mailbox appears in the list when you come back.</p>
        <Field label="Address to connect (optional)" hint="Sent to the provider as the sign-in hint; the consent must then be for this address.">
          {(id) => <input id={id} type="email" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} autoComplete="off" placeholder="ann@acme.example" />}
        </Field>
        <div class="actions">
          {(Object.keys(PROVIDERS) as Provider[]).map((provider) => (
            <button key={provider} type="button" class="primary" disabled={busy} onClick={() => void connect(provider)}>
              Connect {PROVIDERS[provider]}
            </button>
          ))}
        </div>
      </form>
    </Section>
  );
}

/** The callback's answer in this page's query string, once: read and removed so a reload does not repeat it. */
function takeReturn(): { sessionId: string; status: string | null; error: string | null } | null {
  const query = new URLSearchParams(location.search);
  const sessionId = query.get("session_id");
  if (!sessionId) return null;
  history.replaceState(history.state, "", `${location.pathname}${location.hash}`);
  return { sessionId, status: query.get("status"), error: query.get("error") };
}

const POLL_MS = 1500;
const POLL_TRIES = 20;

/** After the provider sent the browser back: the session's outcome in words, polled while it is pending. */
export function ConsentOutcome({ onSettled }: { onSettled: () => Promise<void> }) {
  const [back] = useState(takeReturn);
  const [state, setState] = useState<{ session?: OAuthSession; failure?: string } | null>(null);
  useEffect(() => {
    if (!back) return;
    let live = true;
    void (async () => {
      for (let tries = 0; live && tries < POLL_TRIES; tries++) {
        try {
          const session = await must(api.GET("/api/v1/email-accounts/oauth/sessions/{session_id}", { params: { path: { session_id: back.sessionId } } }));
          if (!live) return;
          setState({ session });
          if (session.status !== "pending") break;
        } catch (error) {
          if (live) setState({ failure: `${oauthError(back.error)} (${error instanceof Error ? error.message : String(error)})` });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      if (live) await onSettled();
    })();
    return () => {
      live = false;
    };
  }, []);
  if (!back) return null;
  const session = state?.session;
  const provider = PROVIDERS[session?.provider ?? "google"];
  return (
    <section class="card" aria-label="Connection outcome" data-testid="oauth-outcome">
      <div role="status">
        {!state ? (
          <p class="muted">Reading how the connection went…</p>
        ) : state.failure ? (
          <p class="error">{state.failure}</p>
        ) : session!.status === "success" ? (
          <p>
            <Badge tone="good">Connected</Badge> {session!.email} {session!.reconnect ? "is reconnected" : "is connected"} through {provider}
            {session!.connection_state === "disconnected" ? ", but its connection check failed: see the mailbox below for why." : "; its connection check runs now."}
          </p>
        ) : session!.status === "pending" ? (
          <p class="muted">The consent at {provider} has not finished yet.</p>
        ) : (
          <p class="error">
            <Badge tone="bad">Not connected</Badge> {oauthError(session!.error ?? (session!.status === "expired" ? "expired" : back.error), session!.error_description)}
          </p>
        )}
      </div>
    </section>
  );
}
