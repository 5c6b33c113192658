import { ApiError } from "./errors";

/** An account key acts for the whole account; a client key for one client of it. */
type KeyKind = "account" | "client";

/** Who is calling: the account, and for client keys the one client they act for. */
export interface Principal {
  kind: KeyKind;
  accountId: number;
  clientId: number | null;
  keyId: number;
  keyHash: string;
}

/** Client keys act for one client and may not manage clients, keys or the account itself. */
export function requireAccountKey(principal: Principal, message = "This API key cannot manage clients or API keys"): void {
  if (principal.kind !== "account") throw ApiError.unauthorized(message);
}
