import type { Keyring } from "../platform/crypto";
import { signToken } from "../tracking/tokens";
import { trackedHtml, trackingBaseUrl, unsubscribeUrl } from "../tracking/links";
import { trackedBody, type BodySource } from "./tracked-body";

/**
 * The links one campaign email carries: its unsubscribe address (footer, List-Unsubscribe) and its
 * tracking (pixel, rewritten links), all signed tokens on the mailbox's tracking host. A campaign
 * email names the body it was rendered from, and is tracked from its template's shape when it can be.
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
  }): Promise<{ unsubscribeUrl: string; track: (html: string, body?: BodySource) => Promise<string> }>;
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
        async track(html, body) {
          if (open === null && click === null) return html;
          const tracking = { base, open, click };
          return (body && (await trackedBody(body, html, tracking))) ?? trackedHtml(html, tracking);
        },
      };
    },
  };
}
