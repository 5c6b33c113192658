export interface DevServer {
  url: string;
  apiKey: string;
  adminToken: string;
  stateDir: string;
  /** The server's process id, also its process group's. */
  pid: number;
  /** Everything the instance printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

export function startDevServer(options?: {
  stateDir?: string;
  keepState?: boolean;
  quiet?: boolean;
  mailLab?: boolean;
  /** Added to the server's environment (MAIL_LAB_DIR and MAIL_LAB_JSON: which lab it looks for). */
  env?: Record<string, string>;
}): Promise<DevServer>;
