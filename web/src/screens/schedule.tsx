import { useState } from "preact/hooks";
import { api, must, type Schemas } from "../api";
import { Field, Section, useAction } from "../ui";

type Campaign = Schemas["Campaign"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
/** Every IANA zone the browser knows, with UTC (which Chromium leaves out of the list) first. */
const ZONES = ["UTC", ...(typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : []).filter((z) => z !== "UTC")];

export default function CampaignSchedule({ campaign, onSaved }: { campaign: Campaign; onSaved: () => Promise<void> }) {
  const cron = campaign.scheduler_cron_value;
  const [tz, setTz] = useState(cron?.tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC");
  const [days, setDays] = useState<number[]>(cron?.days ?? [1, 2, 3, 4, 5]);
  const [start, setStart] = useState(cron?.startHour ?? "09:00");
  const [end, setEnd] = useState(cron?.endHour ?? "17:00");
  const [gap, setGap] = useState(String(campaign.min_time_btwn_emails ?? 10));
  const [perDay, setPerDay] = useState(String(campaign.max_leads_per_day ?? 100));
  const [startAt, setStartAt] = useState(campaign.schedule_start_time ? campaign.schedule_start_time.slice(0, 16) : "");

  const [saveSchedule, busySchedule] = useAction(async () => {
    if (days.length === 0) throw new Error("Choose at least one day");
    await must(
      api.POST("/api/v1/campaigns/{campaign_id}/schedule", {
        params: { path: { campaign_id: campaign.id } },
        body: {
          timezone: tz,
          days_of_the_week: days,
          start_hour: start,
          end_hour: end,
          min_time_btw_emails: Number(gap),
          max_new_leads_per_day: Number(perDay),
          schedule_start_time: startAt ? new Date(startAt).toISOString() : null,
        },
      }),
    );
    await onSaved();
    return "Schedule saved";
  });

  const [name, setName] = useState(campaign.name);
  const [stopOn, setStopOn] = useState(campaign.stop_lead_settings ?? "REPLY_TO_AN_EMAIL");
  const track = new Set(campaign.track_settings ?? []);
  const [trackOpens, setTrackOpens] = useState(!track.has("DONT_EMAIL_OPEN"));
  const [trackClicks, setTrackClicks] = useState(!track.has("DONT_LINK_CLICK"));
  const [plain, setPlain] = useState(Boolean(campaign.send_as_plain_text));
  const [unsubscribe, setUnsubscribe] = useState(campaign.unsubscribe_text ?? "");
  const [followUps, setFollowUps] = useState(String(campaign.follow_up_percentage ?? 100));

  const [saveSettings, busySettings] = useAction(async () => {
    await must(
      api.POST("/api/v1/campaigns/{campaign_id}/settings", {
        params: { path: { campaign_id: campaign.id } },
        body: {
          name: name.trim() || campaign.name,
          stop_lead_settings: stopOn as "REPLY_TO_AN_EMAIL" | "CLICK_ON_A_LINK" | "OPEN_AN_EMAIL",
          track_settings: [...(trackOpens ? [] : ["DONT_TRACK_EMAIL_OPEN" as const]), ...(trackClicks ? [] : ["DONT_TRACK_LINK_CLICK" as const])],
          send_as_plain_text: plain,
          unsubscribe_text: unsubscribe,
          follow_up_percentage: Number(followUps),
        },
      }),
    );
    await onSaved();
    return "Settings saved";
  });

  return (
    <>
      <Section title="Schedule">
        <form onSubmit={(e) => (e.preventDefault(), void saveSchedule())}>
          <div class="grid3">
            <Field label="Time zone">
              {(id) => (
                <select id={id} value={tz} onChange={(e) => setTz((e.target as HTMLSelectElement).value)}>
                  {ZONES.map((z) => (
                    <option key={z}>{z}</option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="From (local time)">{(id) => <input id={id} type="time" value={start} onInput={(e) => setStart((e.target as HTMLInputElement).value)} />}</Field>
            <Field label="Until (local time)">{(id) => <input id={id} type="time" value={end} onInput={(e) => setEnd((e.target as HTMLInputElement).value)} />}</Field>
            <Field label="Minutes between emails">{(id) => <input id={id} type="number" min={1} max={1440} value={gap} onInput={(e) => setGap((e.target as HTMLInputElement).value)} />}</Field>
            <Field label="New leads per day">{(id) => <input id={id} type="number" min={1} max={10000} value={perDay} onInput={(e) => setPerDay((e.target as HTMLInputElement).value)} />}</Field>
            <Field label="Start no earlier than (optional)">{(id) => <input id={id} type="datetime-local" value={startAt} onInput={(e) => setStartAt((e.target as HTMLInputElement).value)} />}</Field>
          </div>
          <fieldset class="days">
            <legend>Days</legend>
            {DAYS.map((day, i) => (
              <label key={day} class="check">
                <input type="checkbox" checked={days.includes(i)} onChange={(e) => setDays((e.target as HTMLInputElement).checked ? [...days, i].sort() : days.filter((d) => d !== i))} />
                {day}
              </label>
            ))}
          </fieldset>
          <button type="submit" class="primary" disabled={busySchedule}>
            Save schedule
          </button>
        </form>
      </Section>
      <Section title="Settings">
        <form onSubmit={(e) => (e.preventDefault(), void saveSettings())}>
          <div class="grid3">
            <Field label="Campaign name">{(id) => <input id={id} type="text" maxLength={255} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />}</Field>
            <Field label="Stop a lead's sequence when it">
              {(id) => (
                <select id={id} value={stopOn} onChange={(e) => setStopOn((e.target as HTMLSelectElement).value)}>
                  <option value="REPLY_TO_AN_EMAIL">replies</option>
                  <option value="CLICK_ON_A_LINK">clicks a link (or replies)</option>
                  <option value="OPEN_AN_EMAIL">opens an email (or replies)</option>
                </select>
              )}
            </Field>
            <Field label="Leads that get follow-ups (%)">{(id) => <input id={id} type="number" min={0} max={100} value={followUps} onInput={(e) => setFollowUps((e.target as HTMLInputElement).value)} />}</Field>
            <Field label="Unsubscribe link text" hint="Empty: no link in the body (the List-Unsubscribe header is always sent)">
              {(id) => <input id={id} type="text" maxLength={500} value={unsubscribe} onInput={(e) => setUnsubscribe((e.target as HTMLInputElement).value)} />}
            </Field>
          </div>
          <label class="check">
            <input type="checkbox" checked={trackOpens} onChange={(e) => setTrackOpens((e.target as HTMLInputElement).checked)} /> Track opens
          </label>
          <label class="check">
            <input type="checkbox" checked={trackClicks} onChange={(e) => setTrackClicks((e.target as HTMLInputElement).checked)} /> Track link clicks
          </label>
          <label class="check">
            <input type="checkbox" checked={plain} onChange={(e) => setPlain((e.target as HTMLInputElement).checked)} /> Send as plain text
          </label>
          <div>
            <button type="submit" class="primary" disabled={busySettings}>
              Save settings
            </button>
          </div>
        </form>
      </Section>
    </>
  );
}
