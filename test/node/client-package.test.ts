import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const pkgDir = join(root, "packages", "client");
let consumer: string;
let tarball: string;

/**
 * A project outside the repository that installed the packed @salvo/client: the tarball unpacked
 * into its node_modules, and its declared dependency (openapi-fetch) beside it, as npm would put
 * it. Nothing resolves through the repository's own node_modules.
 */
beforeAll(() => {
  const build = spawnSync(process.execPath, ["scripts/build-client.mjs"], { cwd: root, encoding: "utf8" });
  expect(build.status, build.stderr).toBe(0);
  consumer = mkdtempSync(join(tmpdir(), "salvo-client-consumer-"));
  const packed = spawnSync("npm", ["pack", "--json", "--pack-destination", consumer], { cwd: pkgDir, encoding: "utf8" });
  expect(packed.status, packed.stderr).toBe(0);
  tarball = (JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as { filename: string }[])[0]!.filename;
  const installed = join(consumer, "node_modules", "@salvo", "client");
  mkdirSync(installed, { recursive: true });
  const untar = spawnSync("tar", ["-xzf", join(consumer, tarball), "-C", installed, "--strip-components=1"], { encoding: "utf8" });
  expect(untar.status, untar.stderr).toBe(0);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const dependency of Object.keys(manifest.dependencies)) symlinkSync(join(root, "node_modules", dependency), join(consumer, "node_modules", dependency));
  mkdirSync(join(consumer, "node_modules", "@types"));
  symlinkSync(join(root, "node_modules", "@types", "node"), join(consumer, "node_modules", "@types", "node"));
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
}, 120_000);

afterAll(() => {
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

describe("@salvo/client, built and packed", () => {
  it("ships JS and declarations only, and declares openapi-fetch as it is built against", () => {
    const installed = join(consumer, "node_modules", "@salvo", "client");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
    expect(manifest.dependencies).toEqual({ "openapi-fetch": rootManifest.devDependencies["openapi-fetch"] });
    const listed = spawnSync("tar", ["-tzf", join(consumer, tarball)], { encoding: "utf8" });
    expect(listed.stdout.split("\n").filter(Boolean).sort()).toEqual(
      ["package/README.md", "package/dist/index.d.ts", "package/dist/index.js", "package/dist/schema.d.ts", "package/dist/schema.js", "package/package.json"].sort(),
    );
  });

  it("imports from the built output in plain Node and sends typed requests with the API key in a header", () => {
    writeFileSync(
      join(consumer, "run.mjs"),
      `import { createSalvoClient } from "@salvo/client";
const seen = [];
const fetch = async (request) => {
  seen.push({ url: request.url, method: request.method, key: request.headers.get("X-API-Key") });
  return new Response(JSON.stringify({ id: 7, email: "owner@example.com" }), { headers: { "Content-Type": "application/json" } });
};
const salvo = createSalvoClient({ baseUrl: "https://api.salvo.example.org", apiKey: "slv_acct_example", fetch });
const account = await salvo.GET("/api/v1/account");
console.log(JSON.stringify({ data: account.data, status: account.response.status, seen }));
`,
    );
    const run = spawnSync(process.execPath, ["run.mjs"], { cwd: consumer, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      data: { id: 7, email: "owner@example.com" },
      status: 200,
      seen: [{ url: "https://api.salvo.example.org/api/v1/account", method: "GET", key: "slv_acct_example" }],
    });
  });

  it("types the README's example (examples/typed-client.ts) for a nodenext project, and rejects a path Salvo does not serve", () => {
    cpSync(join(root, "examples", "typed-client.ts"), join(consumer, "example.ts"));
    writeFileSync(
      join(consumer, "wrong.ts"),
      `import { createSalvoClient } from "@salvo/client";
const salvo = createSalvoClient({ baseUrl: "https://api.salvo.example.org", apiKey: "k" });
// @ts-expect-error not a Salvo path: the declarations are real, not any
await salvo.GET("/api/v1/no-such-route");
`,
    );
    writeFileSync(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, lib: ["ES2023", "DOM"], types: ["node"] },
        files: ["example.ts", "wrong.ts"],
      }),
    );
    const check = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", consumer], { encoding: "utf8" });
    expect(check.status, check.stdout).toBe(0);
  });
});
