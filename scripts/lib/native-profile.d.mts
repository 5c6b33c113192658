import type { DevServer } from "./dev-server.mjs";

/** `perf report --no-children --sort dso,sym --stdio` output, its samples' shares summed by part of the runtime, largest first. */
export function groupSamples(report: string): [string, number][];

export function nativeProfile(server: DevServer, file: string): Promise<{ stop(): Promise<string> }>;
