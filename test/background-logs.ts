/**
 * Lines logged by work a test file left behind (a queue retry of a webhook delivery or of a
 * categorisation, seconds to minutes later) once the file's tests have ended belong to no test,
 * and one logged while a runtime shuts down was sent over the RPC vitest was closing
 * (EnvironmentTeardownError: Closing rpc while "onUserConsoleLog" was pending). The setup files
 * open the console as a file starts and close it when the file's tests end: a closed console
 * drops the line in the runtime, so no RPC is made. (Emptying storage as a file ends was tried:
 * it breaks the batches in flight, which then fail on missing tables and log more.)
 */
const METHODS = ["log", "info", "warn", "error", "debug"] as const;
const gate = globalThis as typeof globalThis & { __salvoConsoleOpen?: boolean };
const GATED = Symbol.for("salvo.gatedConsole");

export function openConsole(): void {
  gate.__salvoConsoleOpen = true;
  for (const method of METHODS) {
    const current = console[method] as ((...args: unknown[]) => void) & { [GATED]?: true };
    if (current[GATED]) continue;
    const gated = Object.assign((...args: unknown[]) => (gate.__salvoConsoleOpen ? current.apply(console, args) : undefined), { [GATED]: true as const });
    console[method] = gated;
  }
}

export function closeConsole(): void {
  gate.__salvoConsoleOpen = false;
}
