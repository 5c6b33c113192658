import { createServer } from "node:http";
import type { TestProject } from "vitest/node";
import { checkMessages, checkSchema, decide } from "./fake-model.mjs";
import { FAKE_OPENAI_KEY } from "./fake-key";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL (`…/v1`) of a fake OpenAI-compatible chat endpoint on loopback (see below). */
    fakeOpenAi: string;
  }
}

/**
 * A fake OpenAI-compatible endpoint on 127.0.0.1, outside the Worker: the categoriser's other model
 * client cannot reach a real one here. `POST /v1/chat/completions` checks the documented request
 * (bearer key, `model`, `messages`, `response_format: {type: "json_schema", json_schema: {name,
 * strict, schema}}`) and answers the documented chat.completion shape with the JSON in
 * `choices[0].message.content`; a bad request gets OpenAI's 400 error object. `GET /requests`
 * lists what it received (for tests to check what was sent).
 */
export default async function setup(project: TestProject) {
  const received: { authorization: string | null; body: unknown }[] = [];
  const server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    const invalid = (message: string) => reply(400, { error: { message, type: "invalid_request_error", param: null, code: null } });
    if (request.method === "GET" && request.url === "/requests") return reply(200, received);
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") return reply(404, { error: { message: "Not found", type: "invalid_request_error" } });
    let raw = "";
    request.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
    request.on("end", async () => {
      const authorization = request.headers.authorization ?? null;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return invalid("We could not parse the JSON body of your request.");
      }
      received.push({ authorization, body });
      if (authorization !== `Bearer ${FAKE_OPENAI_KEY}`) return reply(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } });
      if (typeof body.model !== "string" || !body.model) return invalid("you must provide a model parameter");
      const problem = checkMessages(body.messages);
      if (problem) return invalid(problem);
      const format = body.response_format as { type?: string; json_schema?: { name?: string; strict?: boolean; schema?: unknown } } | undefined;
      if (format?.type !== "json_schema" || typeof format.json_schema?.name !== "string" || format.json_schema.strict !== true) {
        return invalid("response_format must be {type: json_schema, json_schema: {name, strict: true, schema}}");
      }
      const schemaProblem = checkSchema(format.json_schema.schema);
      if (schemaProblem) return invalid(schemaProblem);
      const { answer, mode } = decide(body.messages, format.json_schema.schema);
      if (mode === "error") return reply(500, { error: { message: "The server had an error while processing your request.", type: "server_error" } });
      if (mode === "slow") await new Promise((resolve) => setTimeout(resolve, 3000));
      const content = mode === "fenced" ? "```json\n" + JSON.stringify(answer) + "\n```" : mode === "garbage" ? "Looks positive to me." : JSON.stringify(answer);
      reply(200, {
        id: `chatcmpl-${received.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" }],
        usage: { prompt_tokens: 200, completion_tokens: 30, total_tokens: 230 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  project.provide("fakeOpenAi", `http://127.0.0.1:${port}/v1`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
