// scripts/build.mjs: each step (tsc, bundle, code caches) runs only when what it is made from changed, or
// its output is missing; a checkout with stand-in steps that log each run.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const BUILD = fileURLToPath(new URL("../../../scripts/build.mjs", import.meta.url));
const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A stand-in step: logs its name; writes `outputs`, the same text each time unless `marked` (a bundle's fresh build mark). */
const stand = (
  name: string,
  outputs: string[],
  marked = false,
) => `const { appendFileSync, mkdirSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const root = ${JSON.stringify("ROOT")};
appendFileSync(join(root, "log"), "${name}\\n");
for (const file of ${JSON.stringify(outputs)}) {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), "// made\\n//# mark " + (${marked} ? Math.random() : 0) + "\\n");
}
`;

function checkout(): string {
  const root = mkdtempSync(join(tmpdir(), "ralph-build-"));
  dirs.push(root);
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text.replaceAll("ROOT", root));
  };
  mkdirSync(join(root, "scripts"));
  copyFileSync(BUILD, join(root, "scripts", "build.mjs"));
  write("package.json", "{}\n");
  write("package-lock.json", "{}\n");
  write("tsconfig.json", "{}\n");
  write("src/a.ts", "export const a = 1;\n");
  write("test/a.test.ts", "export {};\n");
  write(
    "node_modules/typescript/bin/tsc",
    stand("tsc", ["dist/.tsbuildinfo", "dist/src/cli/fast-start.js", "dist/src/cli/cached-require.js"]),
  );
  const cli = ["main.cjs", "main.js", "full.cjs", "full.js", "hook-stop.js", "quick-status.cjs", "quick-hook.cjs"].map(
    (name) => `dist/src/cli/${name}`,
  );
  write(
    "scripts/bundle.mjs",
    `import { createRequire } from "node:module"; const require = createRequire(import.meta.url);\n${stand("bundle", cli, true)}`,
  );
  write(
    "scripts/code-cache.mjs",
    `import { createRequire } from "node:module"; const require = createRequire(import.meta.url);\n${stand(
      "code-cache",
      ["full.cjs", "quick-status.cjs", "quick-hook.cjs"].map((name) => `dist/src/cli/${name}.cache`),
    )}`,
  );
  return root;
}

/** The steps one build ran. */
function build(root: string): string[] {
  writeFileSync(join(root, "log"), "");
  const result = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return readFileSync(join(root, "log"), "utf8").split("\n").filter(Boolean);
}

/** Marks `path` changed (a later modification time, as an edit or a checkout gives it). */
function touch(root: string, path: string): void {
  const later = new Date(Date.now() + 5000);
  utimesSync(join(root, path), later, later);
}

test("a build runs each step once, then nothing until an input changes; an edit reruns only what it feeds", () => {
  const root = checkout();
  assert.deepEqual(build(root), ["tsc", "bundle", "code-cache"]);
  assert.deepEqual(build(root), [], "nothing changed: no step runs");
  touch(root, "test/a.test.ts");
  assert.deepEqual(build(root), ["tsc"], "a test is compiled, not bundled");
  touch(root, "src/a.ts");
  assert.deepEqual(
    build(root),
    ["tsc", "bundle", "code-cache"],
    "a source file: compiled, bundled, and the caches made for the new bundle",
  );
  rmSync(join(root, "dist", "src", "cli", "full.cjs.cache"));
  assert.deepEqual(build(root), ["code-cache"], "a missing output is made again");
  writeFileSync(join(root, "log"), "");
  assert.equal(spawnSync(process.execPath, [join(root, "scripts", "build.mjs"), "--force"], { cwd: root }).status, 0);
  assert.deepEqual(
    readFileSync(join(root, "log"), "utf8").split("\n").filter(Boolean),
    ["tsc", "bundle", "code-cache"],
    "--force runs every step",
  );
});
