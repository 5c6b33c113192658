// Renders docs/MOVING.md from its hand-written intro (docs/MOVING.intro.md) and the served OpenAPI
// document, so the endpoint and field lists cannot drift from the route definitions. Pure: the
// script (scripts/docs-moving.mjs) and the test that checks the committed file both call it.

const METHOD_ORDER = ["get", "post", "put", "patch", "delete"];

/** Which of the hosted service's three hosts a path lives on (all three are the one Salvo origin). */
export function hostOf(path, operation = {}) {
  if (!path.startsWith("/api/v1/") || operation["x-salvo-extension"]) return "Salvo only";
  const rest = path.slice("/api/v1/".length);
  if (rest.startsWith("spam-test") || rest.startsWith("smart-delivery")) return "delivery";
  if (rest.startsWith("search-email-leads")) return "prospect";
  return "server";
}

function cell(text) {
  return String(text ?? "").replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
}

function resolve(schema, document) {
  let current = schema;
  for (let depth = 0; current?.$ref && depth < 10; depth += 1) {
    current = document.components?.schemas?.[current.$ref.replace("#/components/schemas/", "")];
  }
  return current;
}

/** The top-level members of a body (every variant of a union), required ones marked with `*`. */
function bodyFields(operation, document) {
  const schema = resolve(operation.requestBody?.content?.["application/json"]?.schema, document);
  if (!schema) return operation.requestBody ? Object.keys(operation.requestBody.content ?? {}).join(", ") : "";
  const variants = [schema, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].map((s) => resolve(s, document));
  const fields = new Map();
  for (const variant of variants) {
    if (variant?.type === "array") fields.set("[…]", false);
    for (const name of Object.keys(variant?.properties ?? {})) {
      fields.set(name, (fields.get(name) ?? false) || (variant.required ?? []).includes(name));
    }
  }
  return [...fields].map(([name, required]) => (name === "[…]" ? "a bare array" : `\`${name}\`${required ? "*" : ""}`)).join(", ");
}

function members(schema, document) {
  const resolved = resolve(schema, document);
  const variants = [resolved, ...(resolved?.anyOf ?? []), ...(resolved?.oneOf ?? []), ...(resolved?.allOf ?? [])].map((v) => resolve(v, document));
  return [...new Set(variants.flatMap((variant) => Object.keys(variant?.properties ?? {})))];
}

/** The success answer's top-level members; one level into `data`, and into a bare array's items. */
function answerFields(operation, document) {
  const success = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith("2"))?.[1];
  const content = success?.content ?? {};
  const json = content["application/json"];
  if (!json) return Object.keys(content).join(", ");
  const schema = resolve(json.schema, document);
  if (schema?.type === "array") return `array of {${members(schema.items, document).join(", ")}}`;
  const properties = resolve(schema, document)?.properties ?? {};
  return members(schema, document)
    .map((name) => {
      if (name !== "data" || !properties.data) return `\`${name}\``;
      const data = resolve(properties.data, document);
      const inner = data?.type === "array" ? members(data.items, document) : members(data, document);
      if (inner.length === 0) return "`data`";
      return data?.type === "array" ? `\`data\`: [{${inner.join(", ")}}]` : `\`data\`: {${inner.join(", ")}}`;
    })
    .join(", ");
}

function queryFields(operation) {
  return (operation.parameters ?? [])
    .filter((parameter) => parameter.in === "query")
    .map((parameter) => `\`${parameter.name}\`${parameter.required ? "*" : ""}`)
    .join(", ");
}

function operationsByTag(document) {
  const groups = new Map();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const method of METHOD_ORDER) {
      const operation = methods[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? "Other";
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag).push({ method, path, operation });
    }
  }
  return groups;
}

function endpointSection(document) {
  const groups = operationsByTag(document);
  const total = [...groups.values()].reduce((sum, list) => sum + list.length, 0);
  const lines = [
    "## Endpoints Salvo serves",
    "",
    `${total} operations, listed from the route definitions (the same ones that validate requests and build \`/openapi.json\`).`,
    "Paths are Salvo's; **host** says which of the hosted service's hosts the path belongs to (`server`, `delivery`,",
    "`prospect`; in Salvo all three are one origin), or `Salvo only` for routes the hosted service does not have.",
    "**Body** lists the JSON body's top-level fields and **query** the query parameters (`*` marks a required one);",
    "**answer** the success answer's top-level members (one level into `data`).",
    "Every path also answers with a trailing slash. The reference page (`/docs`) has each operation's rules, errors and examples.",
    "",
  ];
  for (const [tag, list] of groups) {
    lines.push(`### ${tag}`, "", "| method | path | host | what it does | body | query | answer |", "|---|---|---|---|---|---|---|");
    for (const { method, path, operation } of list) {
      lines.push(
        `| ${method.toUpperCase()} | \`${path}\` | ${hostOf(path, operation)} | ${cell(operation.summary)} | ${cell(bodyFields(operation, document))} | ${cell(queryFields(operation))} | ${cell(answerFields(operation, document))} |`,
      );
    }
    lines.push("");
  }
  return lines;
}

function webhookSection(document) {
  const kinds = Object.keys(document.webhooks ?? {});
  if (kinds.length === 0) return [];
  const schemaOf = (kind) => resolve(document.webhooks[kind].post.requestBody.content["application/json"].schema, document);
  const members = kinds.map((kind) => Object.keys(schemaOf(kind).properties ?? {}));
  const common = members.reduce((shared, list) => shared.filter((name) => list.includes(name)));
  const lines = [
    "## Webhook payloads",
    "",
    "Every payload carries these members (campaign and lead ones are null on events without them):",
    common.map((name) => `\`${name}\``).join(", ") + ".",
    "",
    "| event kind | what happened | its own members |",
    "|---|---|---|",
  ];
  kinds.forEach((kind, index) => {
    const own = members[index].filter((name) => !common.includes(name));
    lines.push(`| \`${kind}\` | ${cell(document.webhooks[kind].post.summary)} | ${own.map((name) => `\`${name}\``).join(", ") || "none"} |`);
  });
  lines.push("");
  return lines;
}

export function renderMovingGuide(document, intro) {
  return [
    "<!-- Generated by `npm run docs:moving` from docs/MOVING.intro.md and the OpenAPI document: edit those, not this file. -->",
    "",
    intro.trim(),
    "",
    ...endpointSection(document),
    ...webhookSection(document),
  ].join("\n");
}
