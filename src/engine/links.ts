import type { Keyring } from "../platform/crypto";
import { signToken } from "../tracking/tokens";
import { trackedHtml, trackingBaseUrl, unsubscribeUrl } from "../tracking/links";

/**
 * The links one campaign email carries: its unsubscribe address (footer, List-Unsubscribe) and its
 * tracking (pixel, rewritten links), all signed tokens on the mailbox's tracking host.
 */
export interface EmailLinks {
  forEmail(input: {
    recordId: number;
    step: number;
    mailboxId: number;
    sentAt: number;
    customTrackingDomain: string | null;
    trackOpens: boolean;
    trackClicks: boolean;
  }): Promise<{ unsubscribeUrl: string; track: (html: string) => Promise<string> }>;
}

export function emailLinks(keyring: Keyring, publicUrl: string): EmailLinks {
  return {
    async forEmail(input) {
      const base = trackingBaseUrl(publicUrl, input.customTrackingDomain);
      const facts = { recordId: input.recordId, step: input.step, mailboxId: input.mailboxId, sentAt: input.sentAt };
      const unsubscribe = unsubscribeUrl(base, await signToken(keyring, { kind: "unsubscribe", ...facts }));
      const open = input.trackOpens ? await signToken(keyring, { kind: "open", ...facts }) : null;
      const click = input.trackClicks ? (url: string) => signToken(keyring, { kind: "click", ...facts, url }) : null;
      return {
        unsubscribeUrl: unsubscribe,
        track: (html) => (open === null && click === null ? Promise.resolve(html) : trackedHtml(html, { base, open, click })),
      };
    },
  };
}
