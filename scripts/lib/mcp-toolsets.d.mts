export interface ToolsetSize {
  /** The `toolsets` value ("" for the default list). */
  selection: string;
  tools: number;
  /** Of those, tools of one operation each (the others are the default list's, always listed). */
  operations: number;
  bytes: number;
  tokens: number;
}

export const START: string;
export const END: string;
export function measureToolsets(listTools: (toolsets: string) => Promise<string>): Promise<ToolsetSize[]>;
export function renderToolsetTable(rows: ToolsetSize[]): string;
export function committedTable(readme: string): string | undefined;
export function withTable(readme: string, table: string): string;
