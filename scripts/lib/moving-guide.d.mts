export function hostOf(path: string, operation?: Record<string, unknown>): string;
export function renderMovingGuide(document: object, intro: string): string;
