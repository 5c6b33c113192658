import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const made: string[] = [];
afterEach(() => {
  for (const file of made.splice(0)) rmSync(file, { force: true });
});

/** `npm run typecheck`'s first step: the `types` script with --check, against a given config. */
function checkTypes(configFile: string) {
  const script = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.types!;
  const [command, ...args] = script.split(" ");
  expect(command).toBe("wrangler");
  return spawnSync(join(root, "node_modules", ".bin", "wrangler"), [...args, "--check", "--config", configFile], { cwd: root, encoding: "utf8", env: { ...process.env, CI: "true" } });
}

describe("generated Env types (worker-configuration.d.ts)", () => {
  it("are current for wrangler.toml", () => {
    const check = checkTypes("wrangler.toml");
    expect(check.status, check.stdout + check.stderr).toBe(0);
  });

  it("fail the check once wrangler.toml gains a binding they lack", () => {
    const copy = `wrangler.types-test-${crypto.randomUUID().slice(0, 8)}.toml`;
    made.push(join(root, copy));
    const text = readFileSync(join(root, "wrangler.toml"), "utf8");
    writeFileSync(join(root, copy), text.replace("[[queues.producers]]\nbinding = \"TRACKING_QUEUE\"", "[[queues.producers]]\nbinding = \"AUDIT_QUEUE\"\nqueue = \"salvo-audit\"\n\n[[queues.producers]]\nbinding = \"TRACKING_QUEUE\""));
    expect(readFileSync(join(root, copy), "utf8")).toContain("AUDIT_QUEUE");
    expect(checkTypes(copy).status).not.toBe(0);
  });
});
