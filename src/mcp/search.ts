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
 * query word counts the weights of the fields it is found in, times how rare the word is among the
 * items, so "pause" decides more than "campaign"), then the items' own order.
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
    queryWords.map((queryWord) => entry.fields.reduce((sum, [field, words]) => sum + (words.some((word) => wordMatches(queryWord, word)) ? WEIGHTS[field] : 0), 0)),
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

/** How many single-character edits turn one name into the other (case ignored). */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= y.length; j += 1) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[y.length]!;
}

/** The names a mistyped one most likely meant: within a few edits first, then by its words. */
export function nearestNames<T>(items: T[], nameOf: (item: T) => string, searchable: (item: T) => Searchable, typed: string, count: number): string[] {
  const close = items
    .map((item) => ({ name: nameOf(item), distance: editDistance(nameOf(item), typed) }))
    .filter((entry) => entry.distance <= Math.max(2, Math.floor(typed.length / 4)))
    .sort((a, b) => a.distance - b.distance)
    .map((entry) => entry.name);
  const byWords = rankByKeywords(items, searchable, typed).map(nameOf);
  return [...new Set([...close, ...byWords])].slice(0, count);
}
