// The decision logic behind both model fakes (test/triage/fake-workers-ai.mjs: the Workers AI binding;
// test/triage/openai-server.global.ts: an OpenAI-compatible HTTP endpoint). Only the edge is fake: each
// fake checks the request against its API's documented shape and answers in that API's documented
// shape; everything of ours (prompt building, schema, parsing, thresholds, storage) runs for real.
//
// The "model" reads the reply the way a model would be asked to: from the user message's JSON
// (categories offered, the reply), and answers with one of the offered ids. Its vocabulary is
// deliberately narrow so other suites' replies ("Sounds good", "Let's talk") stay unsure (null).
//
// Directives a test may put in the reply text or the system prompt:
//   [[fake:confidence=0.55]]  answer with this confidence
//   [[fake:category=99]]      answer this id even if not offered
//   [[fake:prefer=Name]]      (in the prompt) choose the offered category with that name
//   [[fake:error]]            fail (Workers AI throws; the HTTP endpoint answers 500)
//   [[fake:slow]]             answer after 3 s
//   [[fake:fenced]]           wrap the JSON in a code fence, as text
//   [[fake:garbage]]          answer something that is not the JSON asked for

/** Phrase → category name, confidence. */
export const VOCABULARY = [
  ["can we talk", "Meeting Request", 0.92],
  ["book a call", "Meeting Request", 0.9],
  ["send me the pricing sheet", "Information Request", 0.88],
  ["we are interested in a demo", "Interested", 0.95],
  ["no budget this year", "Not Interested", 0.9],
  ["please stop all of this", "Do Not Contact", 0.8],
];

/** Checks chat messages as both APIs take them; answers the problem or null. */
export function checkMessages(messages) {
  if (!Array.isArray(messages) || messages.length !== 2) return "messages must be [system, user]";
  for (const m of messages) {
    if (typeof m !== "object" || m === null || typeof m.content !== "string" || !["system", "user", "assistant"].includes(m.role)) return "each message needs a role and string content";
  }
  if (messages[0].role !== "system" || messages[1].role !== "user") return "roles must be system then user";
  let input;
  try {
    input = JSON.parse(messages[1].content);
  } catch {
    return "the user message must carry the JSON input";
  }
  if (!Array.isArray(input.categories) || typeof input.reply?.text !== "string") return "the input needs categories and reply.text";
  return null;
}

/** Checks the answer's JSON Schema: category_id constrained to ids (and null), confidence and reason required. */
export function checkSchema(schema) {
  if (typeof schema !== "object" || schema === null || schema.type !== "object") return "json_schema must be an object schema";
  const props = schema.properties ?? {};
  if (!Array.isArray(props.category_id?.enum)) return "category_id must be an enum of ids";
  for (const key of ["category_id", "confidence", "reason"]) if (!schema.required?.includes(key)) return `${key} must be required`;
  return null;
}

const directive = (text, name) => new RegExp(`\\[\\[fake:${name}(?:=([^\\]]*))?\\]\\]`).exec(text);

/** What the fake model answers: { answer, mode } where mode is "ok", "error", "slow", "fenced" or "garbage". */
export function decide(messages, schema) {
  const system = messages[0].content;
  const input = JSON.parse(messages[1].content);
  const text = `${input.reply.subject ?? ""}\n${input.reply.text}`;
  const offered = new Map(input.categories.map((c) => [c.name.toLowerCase(), c.id]));
  const allowedIds = new Set(schema.properties.category_id.enum);
  for (const c of input.categories) if (!allowedIds.has(c.id)) throw new Error(`category ${c.id} offered but not in the schema`);
  const mode = directive(text, "error") ? "error" : directive(text, "slow") ? "slow" : directive(text, "fenced") ? "fenced" : directive(text, "garbage") ? "garbage" : "ok";
  let answer = { category_id: null, confidence: 0.2, reason: "Not sure what the person wants" };
  const lower = text.toLowerCase();
  const phrase = VOCABULARY.find(([p]) => lower.includes(p));
  if (phrase && offered.has(phrase[1].toLowerCase())) {
    answer = { category_id: offered.get(phrase[1].toLowerCase()), confidence: phrase[2], reason: `The reply says "${phrase[0]}"` };
  }
  const prefer = directive(system, "prefer");
  if (prefer && offered.has(prefer[1].toLowerCase())) answer = { category_id: offered.get(prefer[1].toLowerCase()), confidence: 0.9, reason: `The prompt prefers ${prefer[1]}` };
  const forced = directive(text, "category");
  if (forced) answer = { ...answer, category_id: Number(forced[1]), reason: "Told to" };
  const confidence = directive(text, "confidence");
  if (confidence) answer = { ...answer, confidence: Number(confidence[1]) };
  return { answer, mode };
}
