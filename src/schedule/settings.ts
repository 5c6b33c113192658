import { iso } from "../platform/time";
import { scheduleStartAt, type Schedule } from "./window";

/**
 * A campaign's sending settings (contract section 11), stored as one JSON value: the engine reads
 * them whole with the campaign, and fields that are stored but not acted on stay together.
 */
export interface CampaignSettings {
  trackSettings: TrackSetting[];
  stopLeadSettings: StopLeadSetting;
  unsubscribeText: string;
  addUnsubscribeTag: boolean;
  sendAsPlainText: boolean;
  forcePlainText: boolean;
  followUpPercentage: number;
  outOfOffice: OutOfOfficeSettings;
  autoPauseDomainLeadsOnReply: boolean;
  bounceAutopauseThreshold: number | null;
  /** CONTRACT section 20.3: false turns automatic reply categorisation off for the campaign (out-of-office stays under autoCategorizeOOO). */
  autoCategoriseReply: boolean;
  /** CONTRACT 21.1: 2 = random (each record's stable hash picks a spintax option), 1 = incremental (record k takes option k mod n). */
  spintaxDistributionMode: 1 | 2;
  /** Accepted for compatibility and stored as sent (ai_categorisation_options is read by src/triage/, enable_ai_esp_matching by the engine: `espMatchingOn`). */
  stored: Record<string, unknown>;
}

export const TRACK_SETTINGS = ["DONT_EMAIL_OPEN", "DONT_LINK_CLICK", "DONT_REPLY_TO_AN_EMAIL"] as const;
type TrackSetting = (typeof TRACK_SETTINGS)[number];
export const STOP_LEAD_SETTINGS = ["REPLY_TO_AN_EMAIL", "CLICK_ON_A_LINK", "OPEN_AN_EMAIL"] as const;
type StopLeadSetting = (typeof STOP_LEAD_SETTINGS)[number];

interface OutOfOfficeSettings {
  ignoreOOOasReply: boolean;
  autoReactivateOOO: boolean;
  reactivateOOOwithDelay: number;
  autoCategorizeOOO: boolean;
}

export const DEFAULT_SETTINGS: CampaignSettings = {
  trackSettings: [],
  stopLeadSettings: "REPLY_TO_AN_EMAIL",
  unsubscribeText: "",
  addUnsubscribeTag: false,
  sendAsPlainText: false,
  forcePlainText: false,
  followUpPercentage: 100,
  outOfOffice: { ignoreOOOasReply: false, autoReactivateOOO: false, reactivateOOOwithDelay: 7, autoCategorizeOOO: false },
  autoPauseDomainLeadsOnReply: false,
  bounceAutopauseThreshold: null,
  autoCategoriseReply: true,
  spintaxDistributionMode: 2,
  stored: {},
};

/** What a settings post changes: the fields it was given, and of the two nested objects the keys it was given. */
export type SettingsChange = Partial<Omit<CampaignSettings, "outOfOffice" | "stored">> & {
  outOfOffice?: Partial<OutOfOfficeSettings>;
  stored?: Record<string, unknown>;
};

/** A change's defined fields as JSON paths (`$.field`) and their values. */
export function definedPaths(change: object, prefix = "$"): [string, unknown][] {
  return Object.entries(change).flatMap(([key, value]) => (value === undefined ? [] : [[`${prefix}.${key}`, value]]));
}

/** The JSON paths a settings change sets: the nested objects key by key, so a post of one key keeps the others. */
export function settingsPaths(change: SettingsChange): [string, unknown][] {
  const { outOfOffice = {}, stored = {}, ...fields } = change;
  return [...definedPaths(fields), ...definedPaths(outOfOffice, "$.outOfOffice"), ...definedPaths(stored, "$.stored")];
}

/** The write names of track settings map onto the read names (both are accepted). */
export function trackSetting(value: string): TrackSetting {
  return value.replace(/^DONT_TRACK_/, "DONT_") as TrackSetting;
}

/** A first schedule's defaults (contract section 11, inferred): Monday-Friday 09:00-17:00. */
export const FIRST_SCHEDULE: Omit<Schedule, "timezone"> = {
  days_of_the_week: [1, 2, 3, 4, 5],
  start_hour: "09:00",
  end_hour: "17:00",
  min_time_btw_emails: 10,
  max_new_leads_per_day: 100,
  schedule_start_time: null,
};

/** The schedule a change leads to, over the stored one (FIRST_SCHEDULE's defaults when none); null without a zone. */
export function scheduleWithDefaults(current: Schedule | null, change: Partial<Schedule>): Schedule | null {
  const base = current ?? FIRST_SCHEDULE;
  const timezone = change.timezone ?? current?.timezone;
  if (!timezone) return null;
  const defined = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined));
  return { ...base, ...defined, timezone } as Schedule;
}

/** `schedule_start_time` as timestamps leave the API (UTC, milliseconds): rows saved before input times were normalised hold it as sent, offset and all. */
export function presentStartTime(schedule: Schedule | null): string | null {
  const start = schedule && scheduleStartAt(schedule);
  return start == null ? null : iso(start);
}

/** The read shape's `scheduler_cron_value`. */
function presentSchedule(schedule: Schedule | null) {
  return schedule
    ? { tz: schedule.timezone, days: [...schedule.days_of_the_week], startHour: schedule.start_hour, endHour: schedule.end_hour }
    : null;
}

/**
 * ESP matching (CONTRACT 23.3: `enable_ai_esp_matching`, stored as sent): on for true, 1 or "true"
 * (src/esp/store.ts's `espMatchingSql` reads the stored JSON the same way).
 */
export function espMatchingOn(settings: CampaignSettings): boolean {
  const value = settings.stored.enable_ai_esp_matching;
  return value === true || value === 1 || value === "true";
}

/** The stored JSON as settings, every absent field at its default. */
export function settingsOf(stored: Record<string, unknown> | null): CampaignSettings {
  const value = (stored ?? {}) as Partial<CampaignSettings>;
  return { ...DEFAULT_SETTINGS, ...value, outOfOffice: { ...DEFAULT_SETTINGS.outOfOffice, ...value.outOfOffice } };
}

export function scheduleOf(stored: Record<string, unknown> | null): Schedule | null {
  return (stored as Schedule | null) ?? null;
}

/** The fields section 11 adds to a campaign's read shape. */
export function presentSending(schedule: Schedule | null, settings: CampaignSettings) {
  return {
    track_settings: settings.trackSettings,
    scheduler_cron_value: presentSchedule(schedule),
    min_time_btwn_emails: schedule?.min_time_btw_emails ?? null,
    max_leads_per_day: schedule?.max_new_leads_per_day ?? null,
    schedule_start_time: presentStartTime(schedule),
    send_in_lead_timezone: schedule?.send_in_lead_timezone ?? false,
    stop_lead_settings: settings.stopLeadSettings,
    unsubscribe_text: settings.unsubscribeText,
    send_as_plain_text: settings.sendAsPlainText,
    force_plain_text: settings.forcePlainText,
    follow_up_percentage: settings.followUpPercentage,
    enable_ai_esp_matching: espMatchingOn(settings),
    add_unsubscribe_tag: settings.addUnsubscribeTag,
    auto_pause_domain_leads_on_reply: settings.autoPauseDomainLeadsOnReply,
    bounce_autopause_threshold: settings.bounceAutopauseThreshold,
    out_of_office_detection_settings: settings.outOfOffice,
    ai_categorisation_options: settings.stored.ai_categorisation_options ?? null,
    auto_categorise_reply: settings.autoCategoriseReply,
    spintax_distribution_mode: settings.spintaxDistributionMode,
  };
}
