/** What find_operations searches in one operation, each field weighted by how much it says. */
export interface Searchable {
  name: string;
  summary: string;
  path: string;
  tags: string[];
  description: string;
}

const WEIGHTS = { name: 3, summary: 3, path: 2, tags: 2, description: 1 } as const;

/** Words that say nothing about which operation is meant. */
const STOP_WORDS = new Set(
  "a an and any are as at be by can do does for from how i in into is it its me my of on or our the their them this to what which with you your api v1 id ids".split(" "),
);

/** A word reduced so that plurals meet their singular: replies/reply, campaigns/campaign, tags/tag. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** Lower-case words of a text, camelCase and snake_case split: getCampaignLeads → get, campaign, lead. */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word && !STOP_WORDS.has(word))
    .map(stem);
}

/** Equal, or one the other's start when both are long enough to mean it (unsubscribe/unsubscribed). */
function wordMatches(query: string, word: string): boolean {
  if (query === word) return true;
  return Math.min(query.length, word.length) >= 4 && (word.startsWith(query) || query.startsWith(word));
}

interface Indexed<T> {
  item: T;
  order: number;
  fields: [keyof typeof WEIGHTS, string[]][];
}

/**
 * The items that match a query, best first: most query words found, then the highest score (each
 * query word counts the heaviest field it is found in, times how rare the word is among the items,
 * so "pause" decides more than "campaign"), then the items' own order.
 */
export function rankByKeywords<T>(items: T[], searchable: (item: T) => Searchable, query: string): T[] {
  const queryWords = [...new Set(wordsOf(query))];
  if (queryWords.length === 0) return [];
  const indexed: Indexed<T>[] = items.map((item, order) => {
    const text = searchable(item);
    return {
      item,
      order,
      fields: [
        ["name", wordsOf(text.name)],
        ["summary", wordsOf(text.summary)],
        ["path", wordsOf(text.path)],
        ["tags", wordsOf(text.tags.join(" "))],
        ["description", wordsOf(text.description)],
      ],
    };
  });
  const weights = indexed.map((entry) =>
    queryWords.map((queryWord) => Math.max(0, ...entry.fields.filter(([, words]) => words.some((word) => wordMatches(queryWord, word))).map(([field]) => WEIGHTS[field]))),
  );
  const rarity = queryWords.map((_word, index) => Math.log(1 + items.length / Math.max(1, weights.filter((row) => row[index]! > 0).length)));
  return indexed
    .map((entry, index) => {
      const row = weights[index]!;
      return { ...entry, found: row.filter((weight) => weight > 0).length, score: row.reduce((sum, weight, word) => sum + weight * rarity[word]!, 0) };
    })
    .filter((entry) => entry.found > 0)
    .sort((a, b) => b.found - a.found || b.score - a.score || a.order - b.order)
    .map((entry) => entry.item);
}
