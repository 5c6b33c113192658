export const VOCABULARY: [string, string, number][];
export function checkMessages(messages: unknown): string | null;
export function checkSchema(schema: unknown): string | null;
export function decide(messages: unknown, schema: unknown): { answer: { category_id: number | null; confidence: number; reason: string }; mode: "ok" | "error" | "slow" | "fenced" | "garbage" };
