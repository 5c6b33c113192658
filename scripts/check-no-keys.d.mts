export function defaultDirs(): string[];
export function labTokenValues(labJson?: string): string[];
export function findKeys(dirs: string[], tokens?: string[], since?: number): { path: string; keys: string[] }[];
