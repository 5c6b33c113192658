import { describe, expect, it } from "vitest";
import { createCampaign } from "../campaigns/fixtures";
import { sequenceStepsOf } from "../db";
import { callJson, createClient, createClientKey, fileEnv, provisionAccount } from "../helpers";
import { database } from "../../src/platform/db";
import { replaceSequence } from "../../src/sequences/store";

interface Step {
  id: number;
  seq_number: number;
  subject: string;
  email_body: string | null;
  seq_delay_details: { delay_in_days: number; delayInDays: number };
  variant_distribution_type: string;
  sequence_variants: { id: number; variant_label: string; subject: string; email_body: string; variant_distribution_percentage: number | null; email_campaign_seq_id: number }[] | null;
  [field: string]: unknown;
}

function save(apiKey: string, campaign: number, body: unknown) {
  return callJson<{ ok: boolean; data: Step[]; error?: string; details?: { path: string; message: string }[] }>(
    `/api/v1/campaigns/${campaign}/sequences`,
    { method: "POST", apiKey, body },
  );
}

function read(apiKey: string, campaign: number) {
  return callJson<Step[]>(`/api/v1/campaigns/${campaign}/sequences`, { apiKey });
}

async function setup() {
  const account = await provisionAccount();
  return { k: account.apiKey, campaign: await createCampaign(account.apiKey) };
}

const threeSteps = [
  { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "{Hi|Hello} {{first_name | there}}", email_body: "<p>About {{company_name}}</p>" },
  { seq_number: 2, seq_delay_details: { delay_in_days: 2 }, email_body: "Following up" },
  {
    seq_number: 3,
    delay_in_days: 4,
    subject: "Last one",
    seq_variants: [
      { subject: "A subject", email_body: "Variant A for {{Industry}}", variant_distribution_percentage: 70 },
      { subject: "B subject", email_body: "Variant B", distribution: 30, variant_label: "Bee" },
    ],
  },
];

describe("sequences", () => {
  it("stores a sequence with every alias and reads it back in the hosted shape", async () => {
    const { k, campaign } = await setup();
    const saved = await save(k, campaign, { sequences: threeSteps });
    expect(saved.status).toBe(200);
    expect(saved.body.ok).toBe(true);
    const { status, body } = await read(k, campaign);
    expect(status).toBe(200);
    expect(body).toEqual(saved.body.data);
    expect(body.map((s) => [s.seq_number, s.seq_delay_details, s.subject])).toEqual([
      [1, { delay_in_days: 0, delayInDays: 0 }, "{Hi|Hello} {{first_name | there}}"],
      [2, { delay_in_days: 2, delayInDays: 2 }, ""],
      [3, { delay_in_days: 4, delayInDays: 4 }, "Last one"],
    ]);
    expect(body[0]).toMatchObject({ email_campaign_id: campaign, variant_distribution_type: "MANUAL_EQUAL", sequence_variants: null });
    expect(body[2]!.email_body).toBeNull();
    expect(body[2]!.sequence_variants!.map((v) => [v.variant_label, v.subject, v.variant_distribution_percentage, v.email_campaign_seq_id])).toEqual([
      ["A", "A subject", 70, body[2]!.id],
      ["Bee", "B subject", 30, body[2]!.id],
    ]);
  });

  it("accepts the bare array form", async () => {
    const { k, campaign } = await setup();
    expect((await save(k, campaign, threeSteps.slice(0, 2))).status).toBe(200);
    expect((await read(k, campaign)).body).toHaveLength(2);
  });

  it("updates steps with an id in place, adds new ones and retires the ones left out", async () => {
    const { k, campaign } = await setup();
    const first = (await save(k, campaign, { sequences: threeSteps })).body.data;
    const [one, , three] = first;
    const next = await save(k, campaign, {
      sequences: [
        { id: one!.id, seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Changed", email_body: "New body" },
        {
          id: String(three!.id),
          seq_number: 2,
          seq_delay_details: { delayInDays: 3 },
          seq_variants: [{ id: three!.sequence_variants![1]!.id, subject: "B kept", email_body: "Variant B" }],
        },
        { seq_number: 3, seq_delay_details: { delay_in_days: 7 }, email_body: "Brand new" },
      ],
    });
    expect(next.status).toBe(200);
    const steps = (await read(k, campaign)).body;
    expect(steps.map((s) => [s.id === one!.id, s.id === three!.id, s.seq_number, s.subject])).toEqual([
      [true, false, 1, "Changed"],
      [false, true, 2, ""],
      [false, false, 3, ""],
    ]);
    expect(steps[1]!.sequence_variants!.map((v) => [v.variant_label, v.subject])).toEqual([["A", "B kept"]]);
    // Retired rows stay (their sends keep their history), marked deleted.
    const stored = await sequenceStepsOf(campaign);
    expect({ n: stored.length, gone: stored.filter((step) => step.deletedAt !== null).length }).toEqual({ n: 4, gone: 1 });
  });

  it("refuses broken templates, duplicate numbers, missing bodies and unusable weights with 422, storing nothing", async () => {
    const { k, campaign } = await setup();
    const cases: [unknown, string][] = [
      [[{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, email_body: "Hi {{first_name" }], "sequences.0.email_body"],
      [[{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi {{firstName}}", email_body: "x" }], "sequences.0.subject"],
      [[{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, email_body: "x" }, { seq_number: 1, seq_delay_details: { delay_in_days: 1 }, email_body: "y" }], "sequences.1.seq_number"],
      [[{ seq_number: 1, seq_delay_details: { delay_in_days: 0 } }], "sequences.0.email_body"],
      [[{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, seq_variants: [{ email_body: "a", variant_distribution_percentage: 0 }, { email_body: "b", variant_distribution_percentage: 0 }] }], "sequences.0.seq_variants"],
      [[{ seq_number: 1, email_body: "x" }], "0.seq_delay_details.delay_in_days"],
      [[{ seq_number: 21, seq_delay_details: { delay_in_days: 0 }, email_body: "x" }], "0.seq_number"],
    ];
    for (const [body, path] of cases) {
      const answer = await save(k, campaign, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.details!.map((d) => d.path).some((p) => p.endsWith(path)), JSON.stringify(answer.body)).toBe(true);
    }
    expect((await read(k, campaign)).body).toEqual([]);
  });

  it("refuses a click link whose URL holds a line break or control character, naming the step and the link", async () => {
    const { k, campaign } = await setup();
    const step = (seq_number: number, email_body: string, extra: Record<string, unknown> = {}) => ({ seq_number, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body, ...extra });
    const split = "https://acme.example/a\r\nSet-Cookie: x=1";
    const first = await save(k, campaign, { sequences: [step(1, `<p>See <a href="${split}">this</a></p>`)] });
    expect(first.status).toBe(422);
    expect(first.body.details).toEqual([{ path: "sequences.0.email_body", message: `Step 1: the link ${JSON.stringify(split)} holds a line break or control character` }]);

    const variants = [
      { subject: "A", email_body: "<a href='https://acme.example/ok'>fine</a>" },
      { subject: "B", email_body: "<a href='https://acme.example/x&#13;&#x0A;y'>entity-encoded</a> <a href=\"https://acme.example/\u0000\">nul</a>" },
    ];
    const second = await save(k, campaign, [step(1, "<p>Fine</p>"), step(2, "", { seq_variants: variants })]);
    expect(second.body.details).toEqual([
      { path: "sequences.1.seq_variants.1.email_body", message: `Step 2: the link ${JSON.stringify("https://acme.example/x\r\ny")} holds a line break or control character` },
      { path: "sequences.1.seq_variants.1.email_body", message: `Step 2: the link ${JSON.stringify("https://acme.example/\u0000")} holds a line break or control character` },
    ]);
    expect((await read(k, campaign)).body).toEqual([]);

    // Non-ASCII links, template variables, and white space around a URL (a browser drops it) are fine.
    const fine = await save(k, campaign, [step(1, `<a href="https://bücher.example/straße?e={{email}}">a</a> <a href="\n https://acme.example/ \n">b</a> <a href="mailto:x@y.example">c</a>`)]);
    expect(fine.status).toBe(200);
  });

  it("refuses another campaign's step id with 400 and an ACTIVE campaign with 400", async () => {
    const { k, campaign } = await setup();
    const other = await createCampaign(k);
    const [step] = (await save(k, other, threeSteps.slice(0, 1))).body.data;
    const foreign = await save(k, campaign, [{ ...threeSteps[0], id: step!.id }]);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toEqual({ error: `Sequence step ${step!.id} does not belong to this campaign` });
    await callJson(`/api/v1/campaigns/${campaign}/status`, { method: "POST", apiKey: k, body: { status: "START" } });
    const active = await save(k, campaign, threeSteps);
    expect(active.status).toBe(400);
    expect(active.body).toEqual({ error: "Pause the campaign before changing its sequences" });
  });

  it("answers another tenant's or another client's campaign like a missing one", async () => {
    const { k, campaign } = await setup();
    await save(k, campaign, threeSteps);
    const stranger = await provisionAccount();
    const missing = await read(stranger.apiKey, 999_999_999);
    expect(await read(stranger.apiKey, campaign)).toMatchObject({ status: missing.status, body: missing.body });
    expect((await save(stranger.apiKey, campaign, threeSteps)).status).toBe(404);
    const client = await createClient(k);
    const clientKey = await createClientKey(k, client);
    expect((await read(clientKey.api_key, campaign)).status).toBe(404);
  });
});

describe("sequence variant ids", () => {
  it("refuses another tenant's variant id on a new step with 400 and leaves that variant as it was", async () => {
    const victim = await setup();
    const [, , victimStep] = (await save(victim.k, victim.campaign, { sequences: threeSteps })).body.data;
    const victimVariant = victimStep!.sequence_variants![0]!;
    const attacker = await setup();
    const answer = await save(attacker.k, attacker.campaign, [
      {
        seq_number: 1,
        seq_delay_details: { delay_in_days: 0 },
        subject: "Mine",
        seq_variants: [{ id: victimVariant.id, subject: "Overwritten", email_body: "Overwritten body" }],
      },
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: `Variant ${victimVariant.id} does not belong to this campaign` });
    const [, , after] = (await read(victim.k, victim.campaign)).body;
    expect(after!.sequence_variants![0]).toMatchObject({ id: victimVariant.id, subject: "A subject", email_body: victimVariant.email_body });

    // Below the rules' check too: the store's update is held to the variant's own step of the campaign.
    const [mine] = (await save(attacker.k, attacker.campaign, { sequences: threeSteps })).body.data;
    const step = { seqNumber: 1, delayInDays: 0, subject: "Mine", emailBody: null, variantDistributionType: "MANUAL_EQUAL" as const, leadDistributionPercentage: null, winningMetricProperty: null };
    const foreign = { id: victimVariant.id, label: null, subject: "Overwritten", emailBody: "Overwritten body", percentage: null };
    await replaceSequence(database(fileEnv().DB), attacker.campaign, [{ ...step, id: mine!.id, variants: [foreign] }], new Date());
    const [, , untouched] = (await read(victim.k, victim.campaign)).body;
    expect(untouched!.sequence_variants![0]).toMatchObject({ id: victimVariant.id, subject: "A subject", email_body: victimVariant.email_body });
  });
});

describe("sequence ids given twice", () => {
  it("refuses a step id or a variant id given twice with 422 and keeps the stored sequence", async () => {
    const { k, campaign } = await setup();
    const before = (await save(k, campaign, { sequences: threeSteps })).body.data;
    const [one, two, three] = before;
    const keep = (step: Step) => ({ id: step.id, seq_number: step.seq_number, seq_delay_details: { delay_in_days: 1 }, subject: step.subject, email_body: step.email_body ?? "x" });
    // Two steps naming one stored step: an update each, and the sequence would end with one step where two were sent.
    const twiceStep = await save(k, campaign, [keep(one!), { ...keep(two!), id: one!.id }]);
    expect(twiceStep.status).toBe(422);
    expect(twiceStep.body.details).toContainEqual({ path: "sequences.1.id", message: `id ${one!.id} appears twice` });
    const [a] = three!.sequence_variants!;
    const twiceVariant = await save(k, campaign, [
      { id: three!.id, seq_number: 1, delay_in_days: 0, subject: "x", seq_variants: [{ id: a!.id, email_body: "A" }, { id: a!.id, email_body: "B" }] },
    ]);
    expect(twiceVariant.status).toBe(422);
    expect(twiceVariant.body.details).toContainEqual({ path: "sequences.0.seq_variants.1.id", message: `id ${a!.id} appears twice` });
    expect((await read(k, campaign)).body).toEqual(before);
  });
});
