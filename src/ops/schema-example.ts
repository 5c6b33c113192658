/**
 * A request example built from a body's JSON Schema, for the operations whose route gives no
 * hand-written one: the required members only (with a schema's own `example` or `default`
 * where it has one), each value the first the schema admits. A test sends every such example to its
 * route, so an example the server would refuse cannot be published.
 */

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  example?: unknown;
  default?: unknown;
  format?: string;
  pattern?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  [key: string]: unknown;
}

const MAX_DEPTH = 6;

/** Values for string formats and for member names whose meaning the name gives away. */
const BY_FORMAT: Record<string, string> = {
  email: "lead@example.com",
  uri: "https://hooks.example.com/salvo",
  url: "https://hooks.example.com/salvo",
  "date-time": "2026-01-25T09:00:00.000Z",
  date: "2026-01-25",
};

function byName(name: string): string | undefined {
  if (/email/i.test(name)) return "lead@example.com";
  if (/url$/i.test(name)) return "https://hooks.example.com/salvo";
  if (/(_time|_date|Time|Date)$/.test(name)) return "2030-01-25T09:00:00.000Z";
  return undefined;
}

/** The schema's first type other than null. */
export function firstType(schema: JsonSchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((type) => type !== "null") : schema.type;
}

function stringValue(schema: JsonSchema, name: string): string {
  if (schema.format && BY_FORMAT[schema.format]) return BY_FORMAT[schema.format]!;
  const named = byName(name);
  if (named) return named;
  const text = "example";
  return schema.minLength && schema.minLength > text.length ? text.padEnd(schema.minLength, "x") : text;
}

export function exampleFromSchema(
  schema: JsonSchema | undefined,
  resolveRef: (ref: string) => JsonSchema | undefined,
  name = "",
  depth = 0,
): unknown {
  if (!schema || depth > MAX_DEPTH) return undefined;
  if (schema.$ref) return exampleFromSchema(resolveRef(schema.$ref), resolveRef, name, depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const choice = schema.anyOf ?? schema.oneOf;
  if (choice?.length) {
    const usable = choice.find((option) => firstType(option) !== "null") ?? choice[0];
    return exampleFromSchema(usable, resolveRef, name, depth + 1);
  }
  if (schema.allOf?.length) return exampleFromSchema(schema.allOf[0], resolveRef, name, depth + 1);
  switch (firstType(schema) ?? (schema.properties ? "object" : undefined)) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const member of schema.required ?? []) {
        const value = exampleFromSchema(schema.properties?.[member], resolveRef, member, depth + 1);
        if (value !== undefined) out[member] = value;
      }
      return out;
    }
    case "array": {
      const item = exampleFromSchema(schema.items, resolveRef, name, depth + 1);
      return item === undefined ? [] : Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case "integer":
    case "number":
      return Math.max(1, schema.minimum ?? 1, schema.exclusiveMinimum === undefined ? 1 : schema.exclusiveMinimum + 1);
    case "boolean":
      return true;
    case "string":
      return stringValue(schema, name);
    default:
      return undefined;
  }
}
