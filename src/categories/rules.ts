/** Lead categories' sentiment (CONTRACT sections 2 and 13): which built-in categories count as positive or negative. */

export const SENTIMENTS = ["positive", "negative", "neutral"] as const;
export type Sentiment = (typeof SENTIMENTS)[number];

/** Built-in categories: Interested, Meeting Request, Information Request positive; Out Of Office and user categories neutral. */
const BUILT_IN_SENTIMENT: Record<number, Sentiment> = { 1: "positive", 2: "positive", 3: "negative", 4: "negative", 5: "positive", 6: "neutral", 7: "negative" };

export const POSITIVE_CATEGORY_IDS = [1, 2, 5];

export function sentimentOf(categoryId: number | null): Sentiment {
  return (categoryId !== null && BUILT_IN_SENTIMENT[categoryId]) || "neutral";
}
