/**
 * The real D1 binding, recording the text of every statement prepared on it (alone or for a batch):
 * tests that hold a path to a fixed number of reads count the ones they care about.
 */
export function recordingQueries(d1: D1Database): { database: D1Database; queries: string[] } {
  const queries: string[] = [];
  const database = new Proxy(d1, {
    get(target, name) {
      if (name === "prepare") {
        return (query: string) => {
          queries.push(query);
          return target.prepare(query);
        };
      }
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { database, queries };
}

/** Reads of `mailboxIdsOfCampaigns` (src/mailboxes/store.ts): one per wake of campaigns' senders. */
export const mailboxWakeReads = (queries: string[]) => queries.filter((query) => /select distinct .*from "campaign_email_accounts"/i.test(query)).length;
