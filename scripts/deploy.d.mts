export interface WranglerResult {
  status: number;
  stdout: string;
  stderr: string;
}
export type Wrangler = (args: string[], options?: { quiet?: boolean }) => WranglerResult;
export type Ask = (question: string, options?: { name?: string; secret?: boolean }) => Promise<string>;

export function main(argv: string[], io?: { wrangler?: Wrangler; ask?: Ask; log?: (line: string) => void }): Promise<void>;
export function setTomlString(text: string, header: string, key: string, value: string, where?: RegExp): string;
export function setDatabaseId(text: string, env: string, binding: string, id: string): string;
export function declaredEnvironments(text: string): string[];
