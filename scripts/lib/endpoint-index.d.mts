export const START: string;
export const END: string;
export function renderEndpointIndex(document: { paths: Record<string, Record<string, { tags?: string[]; summary?: string }>> }): string;
export function withEndpointIndex(readme: string, index: string): string;
