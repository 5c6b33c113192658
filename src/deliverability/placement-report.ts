/** Inbox placement counted per provider from recorded results. Pure. */

export type Folder = "inbox" | "tab" | "spam" | "not_received" | "pending";

export interface ProviderCounts {
  inbox_count: number;
  tab_count: number;
  spam_count: number;
  not_received_count: number;
  pending_count: number;
  /** every result of the provider in the run, pending ones included */
  total_count: number;
}

export function emptyCounts(): ProviderCounts {
  return { inbox_count: 0, tab_count: 0, spam_count: 0, not_received_count: 0, pending_count: 0, total_count: 0 };
}

const FIELD: Record<Folder, keyof ProviderCounts> = {
  inbox: "inbox_count",
  tab: "tab_count",
  spam: "spam_count",
  not_received: "not_received_count",
  pending: "pending_count",
};

export function countByProvider(results: { providerId: string; folder: Folder; n: number }[]): Map<string, ProviderCounts> {
  const counts = new Map<string, ProviderCounts>();
  for (const { providerId, folder, n } of results) {
    const entry = counts.get(providerId) ?? emptyCounts();
    entry[FIELD[folder]] += n;
    entry.total_count += n;
    counts.set(providerId, entry);
  }
  return counts;
}

/** The results that have an answer (everything but pending): the hosted service's adjusted total. */
export function adjustedTotal(counts: ProviderCounts): number {
  return counts.total_count - counts.pending_count;
}

/** All providers' counts added together (a whole run). */
export function sumCounts(counts: Iterable<ProviderCounts>): ProviderCounts {
  const total = emptyCounts();
  for (const entry of counts) {
    for (const key of Object.keys(total) as (keyof ProviderCounts)[]) total[key] += entry[key];
  }
  return total;
}
