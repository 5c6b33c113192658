import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main, setDatabaseId, setTomlString, type WranglerResult } from "../../scripts/deploy.mjs";

const root = join(import.meta.dirname, "..", "..");
const made: string[] = [];
afterEach(() => {
  for (const file of made.splice(0)) rmSync(file, { force: true });
});

/** A copy of wrangler.toml beside it (its paths are relative to it), changed by `edit`. */
function configCopy(edit: (text: string) => string = (text) => text): string {
  const name = `wrangler.deploy-test-${crypto.randomUUID().slice(0, 8)}.toml`;
  const path = join(root, name);
  writeFileSync(path, edit(readFileSync(join(root, "wrangler.toml"), "utf8")));
  made.push(path);
  return name;
}

/** A stand-in for wrangler's calls that need a Cloudflare login: records them and answers like wrangler. */
function fakeWrangler(answers: (args: string[]) => Partial<WranglerResult> | undefined) {
  const calls: { args: string[]; secrets?: Record<string, string> }[] = [];
  const wrangler = (args: string[]) => {
    const file = args.includes("--secrets-file") ? args[args.indexOf("--secrets-file") + 1]! : null;
    calls.push({ args, secrets: file ? JSON.parse(readFileSync(file, "utf8")) : undefined });
    return { status: 0, stdout: "", stderr: "", ...answers(args) };
  };
  return { wrangler, calls, commands: () => calls.map((call) => call.args.slice(0, 2).join(" ")) };
}

describe("npm run deploy -- --dry-run", () => {
  it("needs no login: checks the config, builds the bundle and prints the plan, changing nothing", () => {
    const before = readFileSync(join(root, "wrangler.toml"), "utf8");
    const run = spawnSync(process.execPath, ["scripts/deploy.mjs", "--dry-run", "--env", "staging"], {
      cwd: root,
      encoding: "utf8",
      // No credentials, whatever the machine has: a dry run must not need them.
      env: { ...process.env, CLOUDFLARE_API_TOKEN: "", CLOUDFLARE_ACCOUNT_ID: "", XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "no-login-")) },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/✓ configuration valid; bundle built \(\d+ KiB, nothing uploaded\)/);
    expect(run.stdout).toContain("would create D1 database salvo-staging (DB) unless it exists");
    expect(run.stdout).toContain("would create D1 database salvo-staging-shard-1 (DB_1) unless it exists");
    expect(run.stdout).toContain("would create D1 database salvo-staging-directory (DIRECTORY) unless it exists");
    for (const queue of ["salvo-webhooks-staging", "salvo-webhooks-staging-dlq", "salvo-tracking-staging"]) {
      expect(run.stdout).toContain(`would create queue ${queue} unless it exists`);
    }
    expect(run.stdout).toContain("ADMIN_TOKEN, SECRETS_KEY");
    for (const binding of ["DB", "DB_1", "DIRECTORY"]) expect(run.stdout).toContain(`would apply migrations: wrangler d1 migrations apply ${binding} --remote --env staging`);
    expect(run.stdout).toContain("Dry run: nothing was created or uploaded");
    expect(readFileSync(join(root, "wrangler.toml"), "utf8")).toBe(before);
  });

  it("fails, naming the problem, when a var is one the Worker would refuse or a deployment admits local hosts", async () => {
    const config = configCopy((text) =>
      text.replace('PUBLIC_URL = "https://salvo-staging.example.com"', 'PUBLIC_URL = "https://salvo.example.org/api"').replace(
        /(\[env\.production\.vars\][^[]*?)ALLOW_INSECURE_WEBHOOKS = "false"/s,
        '$1ALLOW_INSECURE_WEBHOOKS = "true"',
      ),
    );
    const lines: string[] = [];
    const { wrangler, calls } = fakeWrangler(() => undefined);
    await expect(main(["--dry-run", "--config", config], { wrangler, log: (line) => lines.push(line) })).rejects.toThrow(/has problems/);
    const output = lines.join("\n");
    expect(output).toMatch(/PUBLIC_URL: must be an origin only/);
    expect(output).toMatch(/ALLOW_INSECURE_WEBHOOKS and ALLOW_LOCAL_MAIL_HOSTS are for local work only/);
    expect(calls).toEqual([]);
  });

  it("refuses an environment the config does not declare, and a real deploy without --env", async () => {
    await expect(main(["--env", "qa"])).rejects.toThrow('declares no environment "qa" (it has: staging, production)');
    await expect(main([])).rejects.toThrow("npm run deploy -- --env <staging|production>");
  });
});

describe("npm run deploy -- --env <name>", () => {
  it("creates what is missing, writes the database id and origin into the config, asks for secrets, migrates, then deploys with them", async () => {
    const config = configCopy();
    const ids: Record<string, string> = {
      "salvo-staging": "4b5c6d7e-1111-4222-8333-944455556666",
      "salvo-staging-shard-1": "4b5c6d7e-1111-4222-8333-944455556667",
      "salvo-staging-directory": "4b5c6d7e-1111-4222-8333-944455556668",
    };
    const { wrangler, calls, commands } = fakeWrangler((args) => {
      const command = args.slice(0, 2).join(" ");
      if (command === "d1 list") return { stdout: "[]" };
      if (command === "d1 create") return { stdout: `✅ Successfully created DB '${args[2]}'\n{\n  "d1_databases": [{ "binding": "DB", "database_name": "${args[2]}", "database_id": "${ids[args[2]!]}" }]\n}` };
      if (command === "queues create" && args[2] === "salvo-webhooks-staging") return { status: 1, stderr: "A queue with this name already exists [code: 11009]" };
      if (command === "secret list") return { status: 1, stderr: "This Worker does not exist on your account. [code: 10007]" };
      return undefined;
    });
    const asked: string[] = [];
    const ask = async (_question: string, { name }: { name?: string } = {}) => {
      asked.push(name!);
      return name === "PUBLIC_URL" ? "https://api.staging.salvo.dev/" : name === "ADMIN_TOKEN" ? "operator-chosen-token" : "";
    };
    const lines: string[] = [];
    await main(["--env", "staging", "--config", config], { wrangler, ask, log: (line) => lines.push(line) });

    expect(commands()).toEqual([
      "whoami",
      "d1 list",
      "d1 create",
      "d1 list",
      "d1 create",
      "d1 list",
      "d1 create",
      "queues create",
      "queues create",
      "queues create",
      "queues create",
      "r2 bucket",
      "secret list",
      "d1 migrations",
      "d1 migrations",
      "d1 migrations",
      "deploy --env",
    ]);
    expect(calls.filter((call) => call.args[0] === "queues").map((call) => call.args[2])).toEqual([
      "salvo-webhooks-staging",
      "salvo-tracking-staging",
      "salvo-triage-staging",
      "salvo-webhooks-staging-dlq",
    ]);
    expect(calls.find((call) => call.args[0] === "r2")!.args.slice(0, 4)).toEqual(["r2", "bucket", "create", "salvo-bodies-staging"]);
    expect(asked).toEqual(["PUBLIC_URL", "ADMIN_TOKEN", "SECRETS_KEY"]);
    const written = readFileSync(join(root, config), "utf8");
    // Each binding's table gets its own database's id.
    expect(written).toMatch(/\[\[env\.staging\.d1_databases\]\]\nbinding = "DB"\n[^[]*database_id = "4b5c6d7e-1111-4222-8333-944455556666"/s);
    expect(written).toMatch(/\[\[env\.staging\.d1_databases\]\]\nbinding = "DB_1"\n[^[]*database_id = "4b5c6d7e-1111-4222-8333-944455556667"/s);
    expect(written).toMatch(/\[\[env\.staging\.d1_databases\]\]\nbinding = "DIRECTORY"\n[^[]*database_id = "4b5c6d7e-1111-4222-8333-944455556668"/s);
    expect(written).toMatch(/\[\[env\.production\.d1_databases\]\][^[]*database_id = "00000000-0000-0000-0000-000000000000"/s);
    expect(written).toMatch(/\[env\.staging\.vars\][^[]*PUBLIC_URL = "https:\/\/api\.staging\.salvo\.dev"/s);
    expect(written).toContain('PUBLIC_URL = "https://salvo-production.example.com"');

    const deploy = calls.at(-1)!;
    expect(deploy.args.slice(0, 5)).toEqual(["deploy", "--env", "staging", "--config", config]);
    expect(deploy.secrets).toEqual({ ADMIN_TOKEN: "operator-chosen-token", SECRETS_KEY: expect.stringMatching(/^k1:[A-Za-z0-9+/]{43}=$/) });
    expect(existsSync(deploy.args[deploy.args.indexOf("--secrets-file") + 1]!)).toBe(false);
    expect(calls.filter((call) => call.args[0] === "d1" && call.args[1] === "migrations").map((call) => call.args)).toEqual(
      ["DB", "DB_1", "DIRECTORY"].map((binding) => ["d1", "migrations", "apply", binding, "--remote", "--env", "staging", "--config", config]),
    );
    expect(lines.join("\n")).not.toContain("operator-chosen-token");
  });

  it("a second run finds everything in place: no creation, no question, no secrets file", async () => {
    const config = configCopy((text) =>
      setTomlString(
        ["DB", "DB_1", "DIRECTORY"].reduce(
          (config, binding, index) => setDatabaseId(config, "production", binding, `5b5c6d7e-1111-4222-8333-94445555666${index}`),
          text,
        ),
        "[env.production.vars]",
        "PUBLIC_URL",
        "https://api.salvo.dev",
      ),
    );
    const { wrangler, calls, commands } = fakeWrangler((args) => {
      const command = args.slice(0, 2).join(" ");
      if (command === "queues create") return { status: 1, stderr: "Queue name is already taken [code: 11009]" };
      if (command === "r2 bucket") return { status: 1, stderr: "The bucket you tried to create already exists, and you own it. [code: 10004]" };
      if (command === "secret list") return { stdout: JSON.stringify([{ name: "ADMIN_TOKEN", type: "secret_text" }, { name: "SECRETS_KEY", type: "secret_text" }]) };
      return undefined;
    });
    const ask = async () => {
      throw new Error("nothing should be asked");
    };
    await main(["--env", "production", "--config", config], { wrangler, ask, log: () => {} });
    expect(commands()).toEqual(["whoami", "queues create", "queues create", "queues create", "queues create", "r2 bucket", "secret list", "d1 migrations", "d1 migrations", "d1 migrations", "deploy --env"]);
    expect(calls.at(-1)!.args).not.toContain("--secrets-file");
  });

  it("stops before creating anything without a login", async () => {
    const { wrangler, commands } = fakeWrangler((args) => (args[0] === "whoami" ? { status: 1, stderr: "You are not authenticated." } : undefined));
    await expect(main(["--env", "staging", "--config", configCopy()], { wrangler, log: () => {} })).rejects.toThrow(/npx wrangler login/);
    expect(commands()).toEqual(["whoami"]);
  });
});

describe("setTomlString", () => {
  it("changes one key of one table and keeps every comment and other table as it was", () => {
    const text = '[a]\n# keep me\nx = "1" # and me\n\n[[b]]\nx = "1"\n';
    expect(setTomlString(text, "[[b]]", "x", "2")).toBe('[a]\n# keep me\nx = "1" # and me\n\n[[b]]\nx = "2"\n');
    expect(setTomlString(text, "[a]", "x", "3")).toBe('[a]\n# keep me\nx = "3" # and me\n\n[[b]]\nx = "1"\n');
    expect(setTomlString(text, "[a]", "y", "4")).toBe('[a]\n# keep me\nx = "1" # and me\ny = "4"\n\n[[b]]\nx = "1"\n');
  });
});
