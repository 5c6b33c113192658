export function defaultDirs(): string[];
export function findKeys(dirs: string[]): { path: string; keys: string[] }[];
