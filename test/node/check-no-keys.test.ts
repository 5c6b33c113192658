import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { findKeys } from "../../scripts/check-no-keys.mjs";

const dir = mkdtempSync(join(tmpdir(), "salvo-no-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("finds API keys and OAuth tokens (by shape, and the lab's issued values) in state and log files, masked", () => {
  const key = `slv_acct_${"A1b2C3d4E5".repeat(4)}`;
  const google = `ya29.${"a0AfH6SMB".repeat(4)}`;
  const jwt = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJsZWFkMUBsYWIifQ.${"c2lnbmF0dXJl".repeat(3)}`;
  const opaque = "Zk3q9XbR2mW7pLs0VtY4nC8hJd6eGa1u";
  mkdirSync(join(dir, "v3", "observability"), { recursive: true });
  writeFileSync(join(dir, "log-1.log"), `GET /api/v1/campaigns?api_key=${key} 200`);
  writeFileSync(join(dir, "v3", "observability", "trace.json"), JSON.stringify({ authorization: `Bearer ${google}`, body: jwt }));
  writeFileSync(join(dir, "mailbox.sqlite"), Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from(`token=${opaque};`, "latin1")]));
  writeFileSync(join(dir, "clean.log"), "Bearer ******** and v1.k1.iv.ciphertext");

  const found = findKeys([dir], [opaque]).sort((a, b) => a.path.localeCompare(b.path));
  expect(found.map((f) => f.path.slice(dir.length + 1))).toEqual(["log-1.log", "mailbox.sqlite", join("v3", "observability", "trace.json")]);
  const shown = JSON.stringify(found);
  for (const value of [key, google, jwt, opaque]) expect(shown).not.toContain(value);
  expect(found.find((f) => f.path.endsWith("trace.json"))!.keys).toHaveLength(2);
});

it("reads only the files written since a run began when it gives its start: other runs' logs are theirs to check", () => {
  const since = Date.now();
  const key = `slv_cli_${"Q9w8E7r6T5".repeat(4)}`;
  const own = mkdtempSync(join(tmpdir(), "salvo-no-keys-since-"));
  try {
    writeFileSync(join(own, "earlier-run.log"), `api_key=${key}`);
    const before = new Date(since - 60_000);
    utimesSync(join(own, "earlier-run.log"), before, before);
    writeFileSync(join(own, "this-run.log"), `Authorization: Bearer ${key}`);
    expect(findKeys([own], [], since).map((f) => f.path.slice(own.length + 1))).toEqual(["this-run.log"]);
    expect(findKeys([own], []).map((f) => f.path.slice(own.length + 1)).sort()).toEqual(["earlier-run.log", "this-run.log"]);
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
});
