/**
 * The part of `html-to-text` (10.x, which ships no types) that src/mail/html-text.ts uses.
 * https://github.com/html-to-text/node-html-to-text/tree/master/packages/html-to-text#options
 */
declare module "html-to-text" {
  interface FormatterBuilder {
    addInline(text: string, options?: { noWordTransform?: boolean }): void;
  }
  type Formatter = (elem: { attribs?: Record<string, string> }, walk: unknown, builder: FormatterBuilder, options: unknown) => void;
  interface SelectorDefinition {
    selector: string;
    format?: string;
    options?: Record<string, unknown>;
  }
  export interface HtmlToTextOptions {
    wordwrap?: number | false | null;
    tables?: boolean | string[];
    selectors?: SelectorDefinition[];
    formatters?: Record<string, Formatter>;
    limits?: { ellipsis?: string; maxDepth?: number; maxChildNodes?: number; maxInputLength?: number };
  }
  export function compile(options?: HtmlToTextOptions): (html: string) => string;
}
