/**
 * An OAuth mailbox's access token, kept by its agent (CONTRACT 18.4): the only place access tokens
 * live, sealed in the object's storage with their expiry. Refreshed when under 5 minutes remain, one
 * refresh at a time, never per email; a rotated refresh token (Microsoft rotates it on every use) is
 * stored in D1 before the new access token is used, so a crash cannot leave the mailbox holding a
 * refresh token the provider has already replaced. A refused refresh disconnects the mailbox.
 */
import { config } from "../config";
import { needsPerson, refreshRefusal, type DisconnectReason } from "../mailboxes/disconnect";
import type { AccessResult, TokenSource } from "../mailboxes/login";
import type { MailboxRow } from "../mailboxes/rules";
import { disconnectMailbox, recordRefresh, sealRefreshToken, storedRefreshToken } from "../mailboxes/store";
import { mailboxApp } from "../oauth/store";
import { refreshAccess } from "../oauth/token-client";
import { decryptSecret, encryptSecret, loadKeyring } from "../platform/crypto";
import { database } from "../platform/db";
import type { Bindings } from "../platform/env";
import { log } from "../platform/logging";

/** A token with less than this left (or half its life, for short-lived ones) is refreshed before use. */
const REFRESH_AHEAD_MS = 5 * 60_000;

interface StoredToken {
  ciphertext: string;
  issuedAt: number;
  expiresAt: number;
  /** The mailbox's connection time it was issued under: a reconnect makes older tokens stale. */
  grant: number | null;
}

const context = (mailboxId: number) => `mailbox-access-token:${mailboxId}`;

export class TokenKeeper implements TokenSource {
  private refreshing: Promise<AccessResult> | null = null;

  /** `env` is the mailbox's object's current environment (its mailbox's shard, once it knows its mailbox). */
  constructor(
    private readonly envOf: () => Bindings,
    private readonly storage: SyncKvStorage,
  ) {}

  private get env(): Bindings {
    return this.envOf();
  }

  /** An access token with at least 5 minutes left, refreshing it first when needed. */
  async accessToken(mailbox: MailboxRow, now: number): Promise<AccessResult> {
    const keyring = await loadKeyring(config(this.env).secretsKey);
    const stored = this.storage.get<StoredToken>("access");
    const grant = mailbox.oauthConnectedAt?.getTime() ?? null;
    const ahead = stored ? Math.min(REFRESH_AHEAD_MS, (stored.expiresAt - stored.issuedAt) / 2) : 0;
    if (stored && stored.grant === grant && stored.expiresAt - now > ahead) {
      return { ok: true, accessToken: await decryptSecret(keyring, stored.ciphertext, context(mailbox.id)), fresh: false };
    }
    // One refresh at a time: a second caller waits for the first and shares its token.
    if (!this.refreshing) this.refreshing = this.refresh(mailbox, now).finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  /** Forgets the held token (a login refused it: the next use refreshes). */
  async forget(): Promise<void> {
    this.storage.delete("access");
  }

  private async refresh(mailbox: MailboxRow, now: number): Promise<AccessResult> {
    const settings = config(this.env);
    const db = database(this.env.DB);
    const keyring = await loadKeyring(settings.secretsKey);
    const provider = mailbox.oauthProvider!;
    const providerConfig = settings.oauth[provider];
    const disconnect = async (reason: DisconnectReason): Promise<AccessResult> => {
      await this.forget();
      await disconnectMailbox(this.env, db, mailbox, "smtp", reason, now, mailbox.oauthTokenCiphertext);
      return { ok: false, kind: "disconnected", reason };
    };
    const app = await mailboxApp(db, keyring, providerConfig, mailbox);
    if (!app) return disconnect(refreshRefusal(provider, "invalid_client", "the OAuth app this mailbox was connected with is no longer configured", null));
    const refreshToken = await storedRefreshToken(keyring, mailbox);
    if (!refreshToken) return disconnect(refreshRefusal(provider, "invalid_grant", "no refresh token is stored", null));
    const result = await refreshAccess(provider, providerConfig, app, refreshToken, now);
    if (!result.ok) {
      if (result.kind === "refused" && needsPerson(result.error)) {
        const age = mailbox.oauthConnectedAt ? now - mailbox.oauthConnectedAt.getTime() : null;
        return disconnect(refreshRefusal(provider, result.error, result.description, age));
      }
      log("warn", "oauth refresh unavailable", { mailbox_id: mailbox.id, error: result.error });
      return { ok: false, kind: "unavailable", message: `The provider could not refresh the token (${result.error})` };
    }
    const { tokens } = result;
    // The rotated refresh token is stored before its access token is used or kept.
    const rotated = tokens.refreshToken && tokens.refreshToken !== refreshToken ? await sealRefreshToken(keyring, mailbox.id, tokens.refreshToken) : null;
    if (!(await recordRefresh(db, mailbox.id, mailbox.oauthTokenCiphertext, rotated, now))) {
      return { ok: false, kind: "unavailable", message: "The mailbox was connected again while its token was refreshed: the next use refreshes the new grant" };
    }
    this.storage.put("access", {
      ciphertext: await encryptSecret(keyring, tokens.accessToken, context(mailbox.id)),
      issuedAt: now,
      expiresAt: tokens.expiresAt,
      grant: mailbox.oauthConnectedAt?.getTime() ?? null,
    } satisfies StoredToken);
    return { ok: true, accessToken: tokens.accessToken, fresh: true };
  }
}
