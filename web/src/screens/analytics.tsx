import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { api, must } from "../api";
import { Failed, Field, Loading, Section, useLoad } from "../ui";

/** Every IANA zone the browser knows, with UTC (which Chromium leaves out of the list) first. */
const ZONES = ["UTC", ...(typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : []).filter((z) => z !== "UTC")];
const DAY_MS = 86_400_000;
/** analytics-by-date takes at most 30 days between start and end. */
const MAX_DAYS = 31;

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function days(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`) && out.length < MAX_DAYS; t += DAY_MS) out.push(isoDay(new Date(t)));
  return out;
}

/** Series of the daily chart: colour-blind-safe colours (Okabe-Ito), each also named in the legend and the table. */
const SERIES = [
  { key: "sent", label: "Sent", color: "#0072B2" },
  { key: "human_opens", label: "Opened (people)", color: "#009E73" },
  { key: "machine_opens", label: "Opened (machines)", color: "#999999" },
  { key: "clicked", label: "Clicked", color: "#E69F00" },
  { key: "replied", label: "Replied", color: "#CC79A7" },
  { key: "bounced", label: "Bounced", color: "#D55E00" },
  { key: "unsubscribed", label: "Unsubscribed", color: "#000000" },
] as const;
type Day = { date: string } & Record<(typeof SERIES)[number]["key"], number>;

/** A few requests at a time: the session spends its key's rate-limit budget. */
async function inBatches<T, R>(items: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
  return out;
}

export default function Analytics({ path }: { path: string[] }) {
  const campaigns = useLoad(async () => await must(api.GET("/api/v1/campaigns")), []);
  const today = new Date();
  const [campaignId, setCampaignId] = useState(path[0] ?? "");
  const [from, setFrom] = useState(isoDay(new Date(today.getTime() - 6 * DAY_MS)));
  const [to, setTo] = useState(isoDay(today));
  const [zone, setZone] = useState(Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");

  useEffect(() => {
    if (!campaignId && campaigns.data?.[0]) setCampaignId(String(campaigns.data[0].id));
  }, [campaigns.data]);

  const figures = useLoad(async () => {
    if (!campaignId) return null;
    const id = Number(campaignId);
    const range = days(from, to);
    const daily = await inBatches(range, 4, async (date): Promise<Day> => {
      const d = await must(api.GET("/api/v1/campaigns/{campaign_id}/analytics-by-date", { params: { path: { campaign_id: id }, query: { start_date: date, end_date: date, time_zone: zone } } }));
      const opens = Number(d.open_count);
      const human = Number(d.human_open_count);
      return { date, sent: Number(d.sent_count), human_opens: human, machine_opens: opens - human, clicked: Number(d.click_count), replied: Number(d.reply_count), bounced: Number(d.bounce_count), unsubscribed: Number(d.unsubscribed_count) };
    });
    const range2 = { start_date: range[0]!, end_date: range[range.length - 1]!, time_zone: zone };
    const [mailboxes, steps] = await Promise.all([
      must(api.GET("/api/v1/campaigns/{campaign_id}/mailbox-statistics", { params: { path: { campaign_id: id }, query: range2 } })),
      must(api.GET("/api/v1/campaigns/{campaign_id}/sequence-analytics", { params: { path: { campaign_id: id }, query: range2 } })),
    ]);
    return { daily, mailboxes: mailboxes.data, steps: steps.data };
  }, [campaignId, from, to, zone]);

  return (
    <>
      <h1>Analytics</h1>
      <form class="row filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Campaign">
          {(id) => (
            <select id={id} value={campaignId} onChange={(e) => setCampaignId((e.target as HTMLSelectElement).value)}>
              {(campaigns.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="From">{(id) => <input id={id} type="date" value={from} max={to} onChange={(e) => setFrom((e.target as HTMLInputElement).value)} />}</Field>
        <Field label="To" hint={`At most ${MAX_DAYS} days`}>
          {(id) => <input id={id} type="date" value={to} min={from} onChange={(e) => setTo((e.target as HTMLInputElement).value)} />}
        </Field>
        <Field label="Time zone">
          {(id) => (
            <select id={id} value={zone} onChange={(e) => setZone((e.target as HTMLSelectElement).value)}>
              {ZONES.map((z) => (
                <option key={z}>{z}</option>
              ))}
            </select>
          )}
        </Field>
      </form>
      {campaigns.data?.length === 0 && <p class="muted">No campaigns yet.</p>}
      {figures.error && <Failed error={figures.error} />}
      {figures.loading && !figures.data ? (
        <Loading what="figures" />
      ) : figures.data ? (
        <>
          <Section title="By day">
            <Chart days={figures.data.daily} />
            <div class="table-wrap">
              <table data-testid="daily-table">
                <caption>Figures by day ({zone})</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    {SERIES.map((s) => (
                      <th scope="col" key={s.key}>
                        {s.label}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {figures.data.daily.map((d) => (
                    <tr key={d.date}>
                      <th scope="row">{d.date}</th>
                      {SERIES.map((s) => (
                        <td key={s.key}>{d[s.key]}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Section>
          <Section title="Per mailbox">
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Mailbox</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Opened</th>
                    <th scope="col">Clicked</th>
                    <th scope="col">Replied</th>
                    <th scope="col">Bounced</th>
                    <th scope="col">Unsubscribed</th>
                  </tr>
                </thead>
                <tbody>
                  {figures.data.mailboxes.map((m) => (
                    <tr key={m.email_account_id}>
                      <th scope="row">{m.from_email}</th>
                      <td>{m.sent_count}</td>
                      <td>{m.open_count}</td>
                      <td>{m.click_count}</td>
                      <td>{m.reply_count}</td>
                      <td>{m.bounce_count}</td>
                      <td>{m.unsubscribed_count}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Section>
          <Section title="Per sequence step">
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Step</th>
                    <th scope="col">Sent</th>
                    <th scope="col">Opened</th>
                    <th scope="col">Clicked</th>
                    <th scope="col">Replied</th>
                    <th scope="col">Bounced</th>
                    <th scope="col">Unsubscribed</th>
                  </tr>
                </thead>
                <tbody>
                  {figures.data.steps.flatMap((s) => [
                    <tr key={s.seq_number}>
                      <th scope="row">Step {s.seq_number}</th>
                      <td>{s.sent_count}</td>
                      <td>{s.open_count}</td>
                      <td>{s.click_count}</td>
                      <td>{s.reply_count}</td>
                      <td>{s.bounce_count}</td>
                      <td>{s.unsubscribed_count}</td>
                    </tr>,
                    ...(s.variants ?? []).map((v) => (
                      <tr key={`${s.seq_number}-${v.seq_variant_id}`} class="sub">
                        <th scope="row">
                          · variant {v.variant_label}
                        </th>
                        <td>{v.sent_count}</td>
                        <td>{v.open_count}</td>
                        <td>{v.click_count}</td>
                        <td>{v.reply_count}</td>
                        <td>—</td>
                        <td>—</td>
                      </tr>
                    )),
                  ])}
                </tbody>
              </table>
            </div>
          </Section>
        </>
      ) : null}
    </>
  );
}

function Chart({ days: data }: { days: Day[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current!;
    const width = Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width,
        height: 280,
        scales: { x: { time: true } },
        // One tick per day at most, labelled by its date (the data are daily).
        axes: [{ incrs: [DAY_MS / 1000, (7 * DAY_MS) / 1000], values: (_u, ticks) => ticks.map((t) => new Date(t * 1000).toISOString().slice(5, 10)) }, { label: "Emails" }],
        series: [{ label: "Day" }, ...SERIES.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: true, size: 6 } }))],
      },
      [data.map((d) => Date.parse(`${d.date}T12:00:00Z`) / 1000), ...SERIES.map((s) => data.map((d) => d[s.key]))],
      element,
    );
    const resize = () => plot.setSize({ width: Math.max(280, element.clientWidth), height: 280 });
    addEventListener("resize", resize);
    return () => {
      removeEventListener("resize", resize);
      plot.destroy();
    };
  }, [data]);
  const sent = data.reduce((n, d) => n + d.sent, 0);
  return <div ref={box} class="chart" role="img" aria-label={`Daily figures chart: ${sent} sent over ${data.length} days; the table below lists every value`} data-testid="chart" />;
}
