import type { CategoriserConfig } from "../config";
import { answerSchema, chatMessages, readAnswer, type ModelAnswer, type ModelRequest } from "./prompt";

/**
 * The model stage behind one small interface, with two real implementations: the Workers AI
 * binding and any OpenAI-compatible chat endpoint (OpenAI, AI Gateway, a self-hosted server).
 * Both ask for JSON constrained by the same schema and hand back the same checked answer; a
 * failure is a ModelError (never carrying the endpoint's key), which the caller turns into the
 * needs-review lane.
 */
export interface ReplyModel {
  /** The model's id, as provenance names it. */
  readonly id: string;
  classify(request: ModelRequest): Promise<ModelAnswer>;
}

export class ModelError extends Error {}

/** How long one answer may take before the reply goes to review instead. */
const MODEL_TIMEOUT_MS = 15_000;
const MAX_TOKENS = 256;

/** The part of the Workers AI binding we use (`env.AI.run`), as Cloudflare documents it. */
export interface WorkersAiBinding {
  run(model: string, inputs: Record<string, unknown>): Promise<unknown>;
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ModelError(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function checked(value: unknown): ModelAnswer {
  const answer = readAnswer(value);
  if (!answer) throw new ModelError("the answer is not the JSON asked for");
  return answer;
}

/**
 * Workers AI: `env.AI.run(model, {messages, response_format: {type: "json_schema", json_schema}})`,
 * answered `{response: <object>}` (JSON mode); some models put the JSON in `response` as text.
 */
export function workersAiModel(binding: WorkersAiBinding, model: string, timeoutMs = MODEL_TIMEOUT_MS): ReplyModel {
  return {
    id: model,
    async classify(request) {
      let result: unknown;
      try {
        result = await within(
          binding.run(model, {
            messages: chatMessages(request),
            response_format: { type: "json_schema", json_schema: answerSchema(request.categories) },
            max_tokens: MAX_TOKENS,
            temperature: 0,
          }),
          timeoutMs,
        );
      } catch (error) {
        if (error instanceof ModelError) throw error;
        throw new ModelError(`Workers AI: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300));
      }
      if (typeof result !== "object" || result === null || !("response" in result)) throw new ModelError("Workers AI: no response member");
      return checked((result as { response: unknown }).response);
    },
  };
}

/**
 * An OpenAI-compatible endpoint: `POST {base}/chat/completions` with a json_schema
 * `response_format`, answered `{choices: [{message: {content: "<json>"}}]}`.
 */
export function openAiModel(
  options: { baseUrl: string; apiKey: string | undefined; model: string },
  timeoutMs = MODEL_TIMEOUT_MS,
  fetcher: typeof fetch = fetch,
): ReplyModel {
  return {
    id: options.model,
    async classify(request) {
      let response: Response;
      try {
        response = await fetcher(`${options.baseUrl}/chat/completions`, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: options.model,
            messages: chatMessages(request),
            response_format: { type: "json_schema", json_schema: { name: "reply_category", strict: true, schema: answerSchema(request.categories) } },
            max_tokens: MAX_TOKENS,
            temperature: 0,
          }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        const name = error instanceof Error ? error.name : "";
        throw new ModelError(name === "TimeoutError" || name === "AbortError" ? `no answer within ${timeoutMs} ms` : "the endpoint could not be reached");
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new ModelError(`the endpoint answered HTTP ${response.status}`);
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw new ModelError("the endpoint's answer is not JSON");
      }
      const message = (body as { choices?: { message?: { content?: unknown; refusal?: unknown } }[] }).choices?.[0]?.message;
      if (!message) throw new ModelError("the endpoint's answer has no choices[0].message");
      if (typeof message.refusal === "string" && message.refusal) throw new ModelError("the model refused");
      return checked(message.content);
    },
  };
}

/** The configured model, or null (rules only, or categorisation off). */
export function configuredModel(settings: CategoriserConfig, ai: WorkersAiBinding | undefined): ReplyModel | null {
  switch (settings.kind) {
    case "workers-ai":
      // Declared in each deployed environment's wrangler.toml section; a missing binding answers as a failing model.
      return ai
        ? workersAiModel(ai, settings.model!)
        : { id: settings.model!, classify: () => Promise.reject(new ModelError("the Workers AI binding AI is not configured")) };
    case "openai":
      return openAiModel({ baseUrl: settings.openai!.baseUrl, apiKey: settings.openai!.apiKey, model: settings.model! });
    default:
      return null;
  }
}
