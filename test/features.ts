/**
 * The served OpenAPI document's operations by feature, for the suites that walk the whole document
 * (the tenancy matrix in test/security-matrix/, the fuzz test in test/fuzz/): one test file per
 * feature, so vitest runs them side by side and a developer runs one feature's. An operation belongs to
 * the first feature a pattern of which matches its path; one that matches none fails the suites'
 * coverage tests until it is given a feature here.
 */
export const FEATURES = {
  analytics: [
    /^\/api\/v1\/analytics\//,
    /^\/api\/v1\/campaigns\/all-leads-activities$/,
    /^\/api\/v1\/campaigns\/\{campaign_id\}\/(analytics|top-level-analytics-by-date|statistics|leads-statistics|lead-statistics|mailbox-statistics|sequence-analytics|analytics-by-date)$/,
  ],
  webhooks: [/^\/api\/v1\/webhooks?(\/|$)/, /^\/api\/v1\/campaigns\/\{campaign_id\}\/(webhooks|retrigger-webhooks)(\/|$)/],
  "campaign-leads": [
    /^\/api\/v1\/campaigns\/\{campaign_id\}\/(leads|leads-export|message-history-for-leads)(\/|$)/,
    /^\/api\/v1\/campaigns\/update-lead-email-account$/,
  ],
  campaigns: [/^\/api\/v1\/campaigns(\/|$)/],
  inbox: [/^\/api\/v1\/master-inbox\//, /^\/api\/v1\/(email-campaigns|send-email)\//],
  deliverability: [/^\/api\/v1\/(spam-test|smart-delivery)\//],
  // Email verification (CONTRACT 22); before `leads`, which would take /leads/verify.
  verification: [/^\/api\/v1\/verify-emails(\/|$)/, /^\/api\/v1\/leads\/verify$/],
  "lead-lists": [
    /^\/api\/v1\/lead-list(\/|$)/,
    /^\/api\/v1\/leads\/(push-to-campaign|leads\/push-between-lists|push-to-list|campaign\/push-to-list)$/,
    /^\/api\/v1\/crm\/leads\/tags(\/|$)/,
  ],
  leads: [/^\/api\/v1\/leads(\/|$)/, /^\/api\/v1\/crm\//],
  mailboxes: [/^\/api\/v1\/(email-accounts|tags)(\/|$)/],
  // The account's settings, clients, rate limit, saved searches and web app sessions.
  account: [/^\/api\/v1\/(account|client|rate-limit|search-email-leads|sessions)(\/|$)/],
  // The operator's routes: admin and health.
  ops: [/^\/admin\//, /^\/health$/],
} satisfies Record<string, RegExp[]>;

export type Feature = keyof typeof FEATURES;

export function featureOf(path: string): Feature | undefined {
  return (Object.keys(FEATURES) as Feature[]).find((feature) => FEATURES[feature].some((pattern) => pattern.test(path)));
}
