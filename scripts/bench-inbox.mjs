// `npm run bench:inbox`: p50/p95 of the three inbox listings, with and without filters, over
// 100k conversations of one account (bulk-loaded by SQL into .wrangler/bench-inbox once).
import { api, measure, ms } from "./lib/bench-tools.mjs";
import { CONVERSATIONS, inboxDataset } from "./lib/inbox-dataset.mjs";

const { server, account, campaigns } = await inboxDataset();

const FILTERED = {
  campaignId: campaigns.slice(0, 3),
  emailStatus: ["Opened", "Clicked"],
  leadCategories: { categoryIdsNotIn: [6] },
};
const cases = [
  ["inbox-replies", {}],
  ["inbox-replies", { filters: FILTERED }],
  ["inbox-replies", { filters: FILTERED, sortBy: "SENT_TIME_DESC", offset: 100 }],
  ["inbox-replies", { filters: { search: "person4242@" } }],
  ["archived", {}],
  ["archived", { filters: FILTERED }],
  ["snoozed", {}],
  ["snoozed", { filters: FILTERED }],
];
try {
  console.log(`\nlistings over ${CONVERSATIONS} conversations, 30 sequential requests after 3 warm-ups (limit 20):`);
  for (const [listing, body] of cases) {
    let total = 0;
    const { p50, p95 } = await measure(async () => {
      total = (await api(server, account.api_key, `/api/v1/master-inbox/${listing}`, { method: "POST", body })).total_count;
    });
    const label = `${listing} ${body.filters ? JSON.stringify(body.filters) : "(no filters)"}${body.sortBy ? ` ${body.sortBy}` : ""}`;
    console.log(`  p50 ${ms(p50).padStart(9)}  p95 ${ms(p95).padStart(9)}  total ${String(total).padStart(6)}  ${label}`);
  }
} finally {
  await server.stop();
}
