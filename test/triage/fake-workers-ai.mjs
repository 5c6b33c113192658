// A stand-in for the Workers AI binding (`env.AI`): a test-only service binding to this auxiliary
// worker's RPC entrypoint (vitest.shared.ts), as Workers AI cannot run here. Called exactly as the
// binding is, `env.AI.run(model, inputs)`. It takes the documented JSON-mode request,
// `env.AI.run(model, { messages, response_format: { type: "json_schema", json_schema } })`, refuses
// anything else the way the binding does (it throws), and answers the documented shape
// `{ response: <object>, usage }` (text for the fenced directive, as some models do).
/* global setTimeout, Response */
import { WorkerEntrypoint } from "cloudflare:workers";
import { checkMessages, checkSchema, decide } from "./fake-model.mjs";

export class FakeWorkersAi extends WorkerEntrypoint {
  async run(model, inputs) {
    if (typeof model !== "string" || !model.startsWith("@cf/")) throw new Error(`AiError: 5007: No such model ${model}`);
    if (typeof inputs !== "object" || inputs === null) throw new Error("AiError: 5006: inputs must be an object");
    const problem = checkMessages(inputs.messages);
    if (problem) throw new Error(`AiError: 5006: ${problem}`);
    const format = inputs.response_format;
    if (format?.type !== "json_schema") throw new Error("AiError: 5006: response_format.type must be json_schema");
    const schemaProblem = checkSchema(format.json_schema);
    if (schemaProblem) throw new Error(`AiError: 5006: ${schemaProblem}`);
    const { answer, mode } = decide(inputs.messages, format.json_schema);
    if (mode === "error") throw new Error("AiError: 3040: Capacity temporarily exceeded, please try again.");
    if (mode === "slow") await new Promise((resolve) => setTimeout(resolve, 3000));
    const usage = { prompt_tokens: 200, completion_tokens: 30, total_tokens: 230 };
    if (mode === "fenced") return { response: "```json\n" + JSON.stringify(answer) + "\n```", usage };
    if (mode === "garbage") return { response: "I think this is a positive reply!", usage };
    return { response: answer, usage };
  }
}

export default { fetch: () => new Response("The fake Workers AI binding answers RPC calls only", { status: 404 }) };
