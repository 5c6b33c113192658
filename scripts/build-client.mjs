// `npm run client:build`: compiles the typed client (src/client, as `npm run client:generate` left
// it) into packages/client/dist, JS and declarations, as the @salvo/client package others install
// (`npm pack` in packages/client makes the tarball). Its one runtime dependency, openapi-fetch, is
// declared in packages/client/package.json.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const pkg = join(root, "packages", "client");
const dist = join(pkg, "dist");

rmSync(dist, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(pkg, "tsconfig.build.json")], { stdio: "inherit" });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// Node's ESM loader (and TypeScript's node16/nodenext resolution in consumers) needs the file
// extension on relative imports; the sources import "./schema" the bundler way.
for (const name of readdirSync(dist)) {
  const path = join(dist, name);
  const text = readFileSync(path, "utf8");
  writeFileSync(path, text.replace(/(from\s+["'])(\.\.?\/[^"']+?)(["'])/g, (match, head, specifier, tail) => (/\.(m?js|json)$/.test(specifier) ? match : `${head}${specifier}.js${tail}`)));
}

const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
const built = readdirSync(dist).sort();
console.log(`Built ${manifest.name}@${manifest.version} in packages/client/dist: ${built.join(", ")}`);
