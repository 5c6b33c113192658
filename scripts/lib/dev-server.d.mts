export interface DevServer {
  url: string;
  apiKey: string;
  adminToken: string;
  stateDir: string;
  /** Everything the instance printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

export function startDevServer(options?: { stateDir?: string; keepState?: boolean; quiet?: boolean; mailLab?: boolean }): Promise<DevServer>;
