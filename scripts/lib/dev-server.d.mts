export interface DevServer {
  url: string;
  apiKey: string;
  adminToken: string;
  stateDir: string;
  stop(): Promise<void>;
}

export function startDevServer(options?: { stateDir?: string; keepState?: boolean; quiet?: boolean }): Promise<DevServer>;
