export interface DevServer {
  url: string;
  apiKey: string;
  adminToken: string;
  stateDir: string;
  /** The server's process id, also its process group's. */
  pid: number;
  stop(): Promise<void>;
}

export function startDevServer(options?: { stateDir?: string; keepState?: boolean; quiet?: boolean }): Promise<DevServer>;
