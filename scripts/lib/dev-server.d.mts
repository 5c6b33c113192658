export interface DevServer {
  url: string;
  apiKey: string;
  adminToken: string;
  stateDir: string;
  stop(): void;
}

export function startDevServer(options?: { stateDir?: string; keepState?: boolean; quiet?: boolean }): Promise<DevServer>;
