import type { Bindings } from "../platform/env";
import { database } from "../platform/db";
import type { CampaignRow, LeadListRow } from "../platform/access";
import { sortUpload } from "../leads/rules";
import { countAlreadyInCampaign, storeUpload } from "../leads/store";
import { scheduleOf } from "../schedule/settings";
import { enrolmentDue } from "../schedule/window";
import { wakeCampaign } from "../mailboxes/wake";
import type { ImportSettings } from "./import";
import { addChunkToList, leadFieldsOf, removeFromList, screenEmails, sourceLeadChunks, type LeadSource, type PushLeaves } from "./store";

interface PushCounts {
  campaign_id: number;
  total_leads: number;
  pushed: number;
  duplicates: number;
  blocked: number;
  unsubscribed: number;
}

/**
 * Adds the source's leads to a campaign the way section 2's add-leads does (storeUpload: leads
 * in the campaign's client scope, one record each, deduplicated by email), a chunk at a time so
 * no request cap applies. Block-listed and unsubscribed leads are skipped unless the settings say
 * otherwise. `moveFrom` takes the leads now in the campaign out of that list. Wakes the
 * campaign's senders when it is ACTIVE and gained records.
 */
export async function pushToCampaign(
  env: Bindings,
  campaign: CampaignRow,
  source: LeadSource,
  settings: ImportSettings,
  moveFrom: number | null,
): Promise<PushCounts> {
  const db = database(env.DB);
  const target = { accountId: campaign.accountId, campaignId: campaign.id, clientId: campaign.clientId };
  const counts: PushCounts = { campaign_id: campaign.id, total_leads: 0, pushed: 0, duplicates: 0, blocked: 0, unsubscribed: 0 };
  for await (const chunk of sourceLeadChunks(db, source)) {
    counts.total_leads += chunk.length;
    const { unique, duplicateCount, invalidEmailCount } = sortUpload(chunk.map(leadFieldsOf));
    const screening = await screenEmails(env.DB, campaign.accountId, campaign.clientId, unique.map((lead) => lead.email));
    const kept = unique.filter((lead) => {
      if (screening.blocked.has(lead.email) && !settings.ignoreGlobalBlockList) {
        counts.blocked += 1;
        return false;
      }
      if (screening.unsubscribed.has(lead.email) && !settings.ignoreUnsubscribeList) {
        counts.unsubscribed += 1;
        return false;
      }
      return true;
    });
    const emails = kept.map((lead) => lead.email);
    const already = await countAlreadyInCampaign(db, target, emails);
    const now = Date.now();
    const due = enrolmentDue(scheduleOf(campaign.schedule), kept.flatMap((lead) => (lead.timezone ? [lead.timezone] : [])), now);
    if (kept.length > 0) await storeUpload(env.DB, target, kept, now, due);
    counts.pushed += kept.length - already;
    // A stored address add-leads would refuse (older data) is not pushed; counted here so the counts add up to total_leads.
    counts.duplicates += already + duplicateCount + invalidEmailCount;
    if (moveFrom !== null) {
      const inCampaign = new Set(emails);
      await removeFromList(db, moveFrom, chunk.filter((lead) => inCampaign.has(lead.email.trim().toLowerCase())).map((lead) => lead.id));
    }
  }
  if (campaign.status === "ACTIVE" && counts.pushed > 0) await wakeCampaign(env, campaign.id);
  return counts;
}

/**
 * Puts the source's leads in a list (addChunkToList: in the list's scope), a chunk at a time, and
 * takes them out of what `leaves` names; answers how many source leads there were.
 */
export async function pushToList(d1: D1Database, list: LeadListRow, source: LeadSource, leaves: PushLeaves | null): Promise<number> {
  let total = 0;
  for await (const chunk of sourceLeadChunks(database(d1), source)) {
    total += chunk.length;
    await addChunkToList(d1, list, chunk, leaves, Date.now());
  }
  return total;
}
