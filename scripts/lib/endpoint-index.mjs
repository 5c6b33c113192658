// Renders README's endpoint index from the served OpenAPI document (one table per tag: method, path,
// summary), between two marker comments, so the README lists every route and cannot drift from the
// route definitions. Pure: scripts/docs-moving.mjs writes it and test/moving-guide.test.ts checks it.

export const START = "<!-- endpoint-index:start (npm run docs:moving writes this) -->";
export const END = "<!-- endpoint-index:end -->";
const METHOD_ORDER = ["get", "post", "put", "patch", "delete"];

const cell = (text) => String(text ?? "").replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

/** The index as Markdown: a heading and a table per tag, in the document's tag order of first use. */
export function renderEndpointIndex(document) {
  const byTag = new Map();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const method of METHOD_ORDER) {
      const operation = methods[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? "Other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(`| ${method.toUpperCase()} | \`${path}\` | ${cell(operation.summary)} |`);
    }
  }
  const sections = [...byTag].map(([tag, rows]) => [`#### ${tag}`, "", "| method | path | |", "|---|---|---|", ...rows].join("\n"));
  return `${START}\n\n${sections.join("\n\n")}\n\n${END}`;
}

/** README with its index replaced by `index`. */
export function withEndpointIndex(readme, index) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${START} ... ${END} block`);
  return readme.slice(0, start) + index + readme.slice(end + END.length);
}
