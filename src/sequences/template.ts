/**
 * Template variables in a step's subject and body (CONTRACT section 11): `{{first_name}}`, the other
 * standard lead fields, `{{<custom field key>}}`, a fallback, and `%signature%`. Pure: the engine
 * renders with the values it loaded; the sequence routes validate with `templateIssues` at save time,
 * so a mistyped variable is a 422 then and never a broken email later.
 *
 * Syntax decisions (the docs give only `{{name}}` with optional spaces):
 * - Fallback: `{{first_name | there}}` (spaces around `|` optional, both parts trimmed) renders
 *   "there" when the value is missing or empty. `|` because it cannot occur in a field name, it is
 *   the spelling other outreach tools use (`{{firstName|there}}`), and inside double braces it never
 *   reads as spintax, whose groups use single braces (see spintax.ts).
 * - Names are trimmed; inside, Unicode letters, digits, `_`, `-`, `.` and single spaces
 *   (custom fields often come from CSV headers such as "Company Size"); nothing else.
 * - A `{` or `}` inside `{{ }}` is an error, which also catches `{{{x}}}`; a lone `{` or `}`
 *   elsewhere is text (spintax and literal braces need them).
 */

const STANDARD_FIELDS = [
  "first_name",
  "last_name",
  "email",
  "company_name",
  "phone_number",
  "website",
  "location",
  "linkedin_profile",
  "company_url",
] as const;
type StandardField = (typeof STANDARD_FIELDS)[number];

const SIGNATURE_TOKEN = "%signature%";

/** One piece of a parsed template: literal text, a variable, or the signature placeholder. */
type TemplatePart =
  | { kind: "text"; text: string }
  | { kind: "variable"; name: string; fallback: string | null; raw: string; offset: number }
  | { kind: "signature" };

/** A problem found in a template; `offset` is the character index of the offending `{{`. */
type TemplateIssue = { code: TemplateIssueCode; offset: number; message: string };
type TemplateIssueCode = "unclosed_variable" | "empty_variable" | "invalid_variable_name" | "unknown_variable";

const NAME = /^[\p{L}\p{N}_.-]+( [\p{L}\p{N}_.-]+)*$/u;
const MAX_NAME_LENGTH = 100;

type Scan = { parts: TemplatePart[]; issues: TemplateIssue[] };

function scan(template: string): Scan {
  const parts: TemplatePart[] = [];
  const issues: TemplateIssue[] = [];
  let text = "";
  const flush = () => {
    if (text) parts.push({ kind: "text", text });
    text = "";
  };
  let i = 0;
  while (i < template.length) {
    if (template.startsWith(SIGNATURE_TOKEN, i)) {
      flush();
      parts.push({ kind: "signature" });
      i += SIGNATURE_TOKEN.length;
      continue;
    }
    if (!template.startsWith("{{", i)) {
      text += template[i]!;
      i += 1;
      continue;
    }
    const close = template.indexOf("}}", i + 2);
    if (close < 0) {
      issues.push({ code: "unclosed_variable", offset: i, message: `"{{" at character ${i + 1} is never closed by "}}"` });
      text += template.slice(i);
      break;
    }
    const raw = template.slice(i, close + 2);
    const inner = template.slice(i + 2, close);
    const bar = inner.indexOf("|");
    const name = (bar < 0 ? inner : inner.slice(0, bar)).trim();
    const fallback = bar < 0 ? null : inner.slice(bar + 1).trim();
    const issue = nameIssue(name, inner, raw, i);
    if (issue) {
      issues.push(issue);
      text += raw;
    } else {
      flush();
      parts.push({ kind: "variable", name, fallback, raw, offset: i });
    }
    i = close + 2;
  }
  flush();
  return { parts, issues };
}

function nameIssue(name: string, inner: string, raw: string, offset: number): TemplateIssue | null {
  const at = `at character ${offset + 1}`;
  if (/[{}]/.test(inner)) {
    return { code: "invalid_variable_name", offset, message: `${raw} ${at}: a variable cannot contain "{" or "}"` };
  }
  if (name === "") return { code: "empty_variable", offset, message: `${raw} ${at} names no variable` };
  if (name.length > MAX_NAME_LENGTH || !NAME.test(name)) {
    return {
      code: "invalid_variable_name",
      offset,
      message: `${raw} ${at}: a variable name is letters, digits, "_", "-", "." and single spaces (at most ${MAX_NAME_LENGTH})`,
    };
  }
  return null;
}

/** The template split into text, variables and signature placeholders (malformed `{{…}}` stay text). */
export function parseTemplate(template: string): TemplatePart[] {
  return scan(template).parts;
}

/** The distinct variable names a template uses, in order of first use, as written (trimmed). */
export function templateVariables(template: string): string[] {
  const names: string[] = [];
  for (const part of scan(template).parts) {
    if (part.kind === "variable" && !names.includes(part.name)) names.push(part.name);
  }
  return names;
}

/** Keys compared without case, `_`, `-`, `.` or spaces: `firstName` and `First Name` meet `first_name`. */
function looseKey(name: string): string {
  return name.toLowerCase().replace(/[\s_.-]/g, "");
}

function standardField(name: string): StandardField | null {
  const lower = name.toLowerCase();
  return STANDARD_FIELDS.find((field) => field === lower) ?? null;
}

/**
 * What the save routes check. `customFieldKeys` is "any" when any well-formed name may be a custom
 * field (custom fields vary per lead and leads are often uploaded after the sequence is written), or
 * the set of keys known to exist. Unknown, in either mode:
 * - malformed syntax (unclosed `{{`, empty name, bad characters);
 * - a near miss of a standard field (`{{firstName}}`, `{{First Name}}`), which would otherwise be taken
 *   for a custom field that no lead has and render as nothing in every email, unless it IS one of the
 *   known custom keys.
 * With a set, any name that is neither a standard field nor one of the keys (ignoring case) is unknown.
 */
export function templateIssues(template: string, customFieldKeys: ReadonlySet<string> | "any"): TemplateIssue[] {
  const { parts, issues } = scan(template);
  const known = customFieldKeys === "any" ? null : new Set([...customFieldKeys].map((key) => key.toLowerCase()));
  for (const part of parts) {
    if (part.kind !== "variable" || standardField(part.name)) continue;
    if (known?.has(part.name.toLowerCase())) continue;
    const nearMiss = STANDARD_FIELDS.find((field) => looseKey(field) === looseKey(part.name));
    if (nearMiss) {
      issues.push({
        code: "unknown_variable",
        offset: part.offset,
        message: `${part.raw} at character ${part.offset + 1} is not a lead field; did you mean {{${nearMiss}}}?`,
      });
    } else if (known) {
      issues.push({
        code: "unknown_variable",
        offset: part.offset,
        message: `${part.raw} at character ${part.offset + 1} is neither a lead field nor a custom field`,
      });
    }
  }
  return issues.sort((a, b) => a.offset - b.offset);
}

/** The lead as the renderer sees it: standard fields and custom fields, any of them missing. */
export type TemplateLead = Partial<Record<StandardField, string | null>> & {
  custom_fields?: Record<string, unknown> | null;
};

type RenderOptions = {
  /** The sending mailbox's signature; absent or empty = `%signature%` renders as nothing. */
  signature?: string | null;
  /** Escape lead values for an HTML body; subjects and plain-text bodies take them as they are. */
  html?: boolean;
};

/** Custom values that are not strings still render (numbers, booleans); objects and arrays do not. */
function customText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return "";
}

/** A variable's value: a standard field, then a custom key exactly, then a custom key ignoring case. */
export function variableValue(lead: TemplateLead, name: string): string {
  const field = standardField(name);
  if (field) return lead[field] ?? "";
  const custom = lead.custom_fields ?? {};
  if (Object.hasOwn(custom, name)) return customText(custom[name]);
  const lower = name.toLowerCase();
  const key = Object.keys(custom).find((k) => k.toLowerCase() === lower);
  return key === undefined ? "" : customText(custom[key]);
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * Renders variables and the signature in ONE pass, so a lead's value containing `{{…}}` or
 * `%signature%` is never expanded again. Malformed `{{…}}` is left as written (save-time validation
 * keeps it out of stored sequences). The fallback is template text, not lead data, so it is not
 * escaped; the signature is the mailbox owner's own HTML and is not escaped either.
 * Spintax must be resolved BEFORE this (see spintax.ts), so values are never spun.
 */
export function renderTemplate(template: string, lead: TemplateLead, options: RenderOptions = {}): string {
  let out = "";
  for (const part of scan(template).parts) {
    if (part.kind === "text") out += part.text;
    else if (part.kind === "signature") out += options.signature ?? "";
    else {
      const value = variableValue(lead, part.name);
      if (value.trim() !== "") out += options.html ? escapeHtml(value) : value;
      else out += part.fallback ?? "";
    }
  }
  return out;
}
