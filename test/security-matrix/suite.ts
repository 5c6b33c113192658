import { beforeAll, describe, expect, it } from "vitest";
import { featureOf, type Feature } from "../features";
import { call } from "../helpers";
import { describeWrites, writeLog, type Write, type WriteLog } from "../write-log";
import { buildAttempt, MISSING, NEEDS_MAIL_SERVER, planOperation, type Attempt, type Case, type Document, type Kind, type Objects, type Slot } from "./plan";
import { seed, tenants, type World } from "./world";

/**
 * The tenancy matrix, one feature per test file (test/features.ts), one test per operation: called
 * with another tenant's ids, every id-taking operation answers exactly as for an id that does not
 * exist and writes nothing; called with the caller's own ids, it succeeds (so the matrix tested the
 * scope, not validation). test/security-matrix/coverage.test.ts holds every operation to a file.
 */

export async function servedDocument(): Promise<Document> {
  return (await (await call("/openapi.json")).json()) as Document;
}

/** The plan of every /api/v1/ operation that takes a tenant's id, and those the matrix cannot build a request for. */
export function planAll(document: Document): { plans: Case[]; unbuildable: string[] } {
  const plans: Case[] = [];
  const unbuildable: string[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    if (!path.startsWith("/api/v1/")) continue;
    for (const [method, operation] of Object.entries(methods)) {
      try {
        const plan = planOperation(document, path, method.toUpperCase(), operation);
        if (plan) plans.push(plan);
      } catch (error) {
        unbuildable.push(`${method.toUpperCase()} ${path}: ${(error as Error).message}`);
      }
    }
  }
  return { plans, unbuildable };
}

/** Each id slot alone, and all of them together when there are several. */
export function variantsOf(plan: Case): Slot[][] {
  const variants = plan.slots.map((slot) => [slot]);
  if (plan.slots.length > 1) variants.push(plan.slots);
  return variants;
}

/** Who calls with whose ids: another account on the same shard and on another, and a client key against its sibling client and its account. */
export const CALLERS = 6;

function callersOf(world: World) {
  const callers = [
    { who: "another account's key", apiKey: world.bApiKey, own: world.bObjects, foreign: world.aObjects },
    { who: "another account's key (client CA's rows)", apiKey: world.bApiKey, own: world.bObjects, foreign: world.caObjects },
    { who: "an account's key on another shard", apiKey: world.dApiKey, own: world.dObjects, foreign: world.aObjects },
    { who: "an account's key on another shard (client CA's rows)", apiKey: world.dApiKey, own: world.dObjects, foreign: world.caObjects },
    { who: "another client's key", apiKey: world.cbApiKey, own: world.cbObjects, foreign: world.caObjects },
    { who: "a client's key (the account's own rows)", apiKey: world.cbApiKey, own: world.cbObjects, foreign: world.aObjects },
  ];
  if (callers.length !== CALLERS) throw new Error("CALLERS is the number of callers");
  return callers;
}

function namingMissing<T extends { result: { status: number; body: unknown } }>(sent: T, ids: (number | string)[]): T {
  const body = sent.result.body as Record<string, unknown> | null;
  // Bulk changes list the ids they skipped (CONTRACT 21.2): another tenant's is skipped like a missing one.
  if (Array.isArray(body?.skipped_ids)) {
    const skipped_ids = body.skipped_ids.map((id) => (ids.includes(id as number) ? MISSING : id));
    return { ...sent, result: { ...sent.result, body: { ...body, skipped_ids } } };
  }
  if (typeof body?.error !== "string") return sent;
  const error = ids.reduce<string>((text, id) => text.replace(new RegExp(`\\b${id}\\b`, "g"), String(MISSING)), body.error);
  // Bulk refusals list the ids they could not find (`not_found_campaign_ids`, CONTRACT 21.1).
  const lists = Object.entries(body)
    .filter(([key, value]) => key.startsWith("not_found_") && Array.isArray(value))
    .map(([key, value]) => [key, (value as unknown[]).map((id) => (ids.includes(id as number) ? MISSING : id))]);
  return { ...sent, result: { ...sent.result, body: { ...body, error, ...Object.fromEntries(lists) } } };
}

async function readBody(response: Response) {
  const text = await response.text();
  return response.headers.get("Content-Type")?.includes("json") && text ? (JSON.parse(text) as unknown) : text;
}

interface Findings {
  mismatches: string[];
  writes: string[];
  onlyValidation: string[];
}

/**
 * Every attempt of one operation with another tenant's ids beside the same with a missing id.
 * `takeWrites` reads the write log after each request (to name the request that wrote), so the
 * requests go one at a time; else the caller reads it once for all of them, and they all go at
 * once (refusals are reads: sent one by one, their round trips were most of the matrix's time).
 */
async function attemptAll(document: Document, plan: Case, world: World, takeWrites: (() => Promise<Write[]>) | undefined): Promise<Findings> {
  const found: Findings = { mismatches: [], writes: [], onlyValidation: [] };
  const pairs = variantsOf(plan).flatMap((tested) => callersOf(world).map((caller) => ({ tested, ...caller })));
  const attempt = async ({ tested, who, apiKey, own, foreign }: (typeof pairs)[number]) => {
    const send = async (request: Attempt): Promise<{ result: { status: number; body: unknown }; written: Write[] }> => {
      const response = await call(request.url, { method: plan.method, apiKey, body: request.body });
      const result = { status: response.status, body: await readBody(response) };
      return { result, written: takeWrites ? await takeWrites() : [] };
    };
    const foreignAttempt = buildAttempt(document, plan, tested, foreign, own);
    const missingAttempt = buildAttempt(document, plan, tested, "missing", own);
    const label = `[${tested.map((s) => `${s.in} ${s.name}`).join(" + ")}] as ${who}: ${plan.method} ${foreignAttempt.url} ${JSON.stringify(foreignAttempt.body ?? "")}`;
    // An error may name the id it refuses ("Email account not found: 12"): read as the missing id's.
    const foreignIds = tested.map((slot) => (foreign as Objects)[slot.kind]);
    const [sentForeign, asMissing] = takeWrites ? [await send(foreignAttempt), await send(missingAttempt)] : await Promise.all([send(foreignAttempt), send(missingAttempt)]);
    return { tested, label, asForeign: namingMissing(sentForeign, foreignIds), asMissing };
  };
  const outcomes: Awaited<ReturnType<typeof attempt>>[] = [];
  if (takeWrites) for (const pair of pairs) outcomes.push(await attempt(pair));
  else outcomes.push(...(await Promise.all(pairs.map(attempt))));
  for (const { tested, label, asForeign, asMissing } of outcomes) {
    if (JSON.stringify(asForeign.result) !== JSON.stringify(asMissing.result)) {
      found.mismatches.push(`${label}\n  foreign: ${JSON.stringify(asForeign.result)}\n  missing: ${JSON.stringify(asMissing.result)}`);
    }
    if (asForeign.written.length) found.writes.push(`${label} wrote ${describeWrites(asForeign.written)}`);
    if (asMissing.written.length) found.writes.push(`${label} (missing id) wrote ${describeWrites(asMissing.written)}`);
    const details = (asMissing.result.body as { details?: { path: string }[] }).details ?? [];
    const aboutTheId = details.some((detail) => tested.some((slot) => detail.path === slot.name));
    if (asMissing.result.status === 422 && !aboutTheId) found.onlyValidation.push(`${label}: ${JSON.stringify(asMissing.result.body)}`);
  }
  return found;
}

/**
 * One operation's refusals: the write log is read once after all its attempts (a refusal writes
 * nothing, so that read is almost always empty); when it is not, the attempts run again, one read
 * after each request, to name the ones that wrote.
 */
async function refuseForeignIds(document: Document, plan: Case, world: World, log: WriteLog) {
  await log.reset();
  let found = await attemptAll(document, plan, world, undefined);
  const written = await log.take();
  if (written.length) {
    const replayed = await attemptAll(document, plan, world, () => log.take());
    const writes = replayed.writes.length ? replayed.writes : [`the attempts wrote ${describeWrites(written)} (and nothing when replayed one by one)`];
    found = { ...found, writes };
  }
  const { mismatches, writes, onlyValidation } = found;
  expect(onlyValidation, `requests refused by validation test nothing: fix the builder or its overrides: ${onlyValidation.slice(0, 5).join("; ")}`).toEqual([]);
  // One assertion, so a broken scope shows both its answer and the rows it wrote.
  expect({ mismatches, writes }, "answers that tell another tenant's id from a missing one, and refused requests that wrote rows").toEqual({ mismatches: [], writes: [] });
}

/** New objects of account B's, its client and keys as in the world (of the kinds in `only`, where some are made only on demand). */
function freshSeed(world: World, only?: Set<Kind>) {
  const { client, clientKey, accountKey } = world.bObjects;
  return seed(world.bApiKey, { client, clientKey, accountKey }, { fileTheTest: false, only });
}

/** The same request with the caller's own ids in `mine`: its answer, and whether it counts as a success. */
async function ownIdsCall(document: Document, plan: Case, world: World, mine: Objects) {
  const attempt = buildAttempt(document, plan, plan.slots, mine, mine);
  const response = await call(attempt.url, { method: plan.method, apiKey: world.bApiKey, body: attempt.body });
  const body = await readBody(response);
  const needs = NEEDS_MAIL_SERVER[plan.label];
  const error = (body as { error?: string })?.error ?? "";
  const reachedTheServer = needs !== undefined && response.status === needs.status && (typeof needs.error === "string" ? error === needs.error : needs.error.test(error));
  return { ok: response.status < 300 || reachedTheServer, answer: `${response.status} ${JSON.stringify(body)}` };
}

/**
 * The same request with the caller's own ids succeeds. First on the objects the file's earlier
 * own-ids calls share (a seed costs some 25 requests; most operations leave the objects usable);
 * where an earlier call changed or deleted what this one needs, again on fresh objects (an empty
 * folder, so it may be deleted), and that answer counts.
 */
async function acceptOwnIds(document: Document, plan: Case, world: World, sharedSeed: () => Promise<Objects>) {
  const shared = await ownIdsCall(document, plan, world, await sharedSeed());
  if (shared.ok) return;
  const fresh = await ownIdsCall(document, plan, world, await freshSeed(world, new Set(plan.slots.map((slot) => slot.kind))));
  expect(fresh.ok, `fails even with the caller's own ids: ${fresh.answer} (on objects earlier calls had used: ${shared.answer})`).toBe(true);
}

/**
 * Declares one feature's matrix: call it (awaited) at the top of test/security-matrix/<feature>.test.ts.
 * Every refusal runs before the first own-ids call, as the own-ids calls change the world (and may
 * start work in the background).
 */
export async function matrixSuite(feature: Feature) {
  const document = await servedDocument();
  const plans = planAll(document).plans.filter((plan) => featureOf(plan.path) === feature);
  describe(`tenancy matrix: ${feature}`, () => {
    let world: World;
    let log: WriteLog;
    beforeAll(async () => {
      log = await writeLog();
      world = await tenants();
    }, 300_000);

    it("has operations", () => expect(plans.length).toBeGreaterThan(0));

    describe("another tenant's ids answer exactly as a missing id, writing nothing", () => {
      for (const plan of plans) it(plan.label, () => refuseForeignIds(document, plan, world, log), 120_000);
    });

    describe("the caller's own ids succeed", () => {
      let shared: Promise<Objects> | undefined;
      const sharedSeed = () => (shared ??= freshSeed(world));
      // Reads first, then changes, deletions last (key deletions end the key).
      const rank = (plan: Case) => (plan.method === "GET" ? 0 : plan.method === "DELETE" ? 2 : 1);
      const ordered = [...plans].sort((x, y) => rank(x) - rank(y));
      for (const plan of ordered) it(plan.label, () => acceptOwnIds(document, plan, world, sharedSeed), 120_000);
    });
  });
}
