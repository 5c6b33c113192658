import type { IncomingHttpHeaders } from "node:http";
import type { MailLab } from "./mail-lab.mjs";

export type LabProvider = "google" | "microsoft";

/** The token endpoint's answer (RFC 6749 5.1; `id_token` from OpenID Connect). */
export interface LabTokenSet {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
  refresh_token: string;
  id_token: string;
}

export function labRequest(
  lab: MailLab,
  url: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>;
export function pkcePair(): { verifier: string; challenge: string };
export function consent(
  lab: MailLab,
  authUrl: string,
  options?: { email?: string; password?: string; allow?: boolean; mailScopes?: string[] },
): Promise<string>;
export function authorizationUrl(
  lab: MailLab,
  provider: LabProvider,
  options?: { redirectUri?: string; state?: string; challenge?: string; loginHint?: string; scope?: string },
): string;
export function tokenRequest(lab: MailLab, provider: LabProvider, fields: Record<string, string>): Promise<{ status: number; body: Record<string, string> }>;
export function labTokens(
  lab: MailLab,
  provider: LabProvider,
  email: string,
  options?: { password?: string; allow?: boolean; mailScopes?: string[]; scope?: string },
): Promise<LabTokenSet>;
export function refreshTokens(lab: MailLab, provider: LabProvider, refreshToken: string): Promise<{ status: number; body: Record<string, string> }>;
export function revokeGrants(lab: MailLab, email: string, clientId?: string): Promise<number>;
export function xoauth2(email: string, token: string): string;
export function oauthbearer(email: string, token: string, host: string, port: number): string;
