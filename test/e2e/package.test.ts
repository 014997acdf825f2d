// The package as a user installs it: `npm pack`'s tarball runs on its own, and a fresh clone's
// `npm test` installs what its tests need.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, tempProjects } from "../helpers/cli.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
const project = tempProjects("ralph-package-");

/** Packs the built package (without re-running prepare) and unpacks it into a fresh directory. */
function unpackTarball(into: string): string {
  const out = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", into], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [{ filename }] = JSON.parse(out) as [{ filename: string }];
  execFileSync("tar", ["xzf", join(into, filename), "-C", into]);
  return join(into, "package");
}

describe("the package", () => {
  test("npm pack's tarball holds a working ralph: --version and a whole demo loop, with only its runtime dependencies", () => {
    const packageDir = unpackTarball(project());
    // Only the declared runtime dependencies, as `npm install -g <tarball>` would provide them.
    mkdirSync(join(packageDir, "node_modules"));
    for (const name of Object.keys(pkg.dependencies)) {
      const target = join(packageDir, "node_modules", name);
      mkdirSync(join(target, ".."), { recursive: true });
      symlinkSync(join(root, "node_modules", name), target);
    }
    const bin = join(packageDir, pkg.bin.ralph as string);
    // npm links the bin as it is: the bundled entry must keep its #! line to run as a command.
    assert.match(readFileSync(bin, "utf8"), /^#!\/usr\/bin\/env node\n/);
    const version = execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8" }).trim();
    assert.match(version, /^\d+\.\d+\.\d+/);
    const cwd = project();
    const result = execFileSync(process.execPath, [bin, "demo"], { cwd, encoding: "utf8", env: cleanEnv() });
    assert.match(result, /DONE/);
  });

  test("prepare builds, so a clone installed with npm install -g (or packed) has dist/", () => {
    assert.match(pkg.scripts.prepare ?? "", /\bnpm run build\b/);
  });

  test("npm test installs every test-only CLI under test/clis before running the tests", () => {
    assert.match(pkg.scripts.test ?? "", /^node scripts\/install-test-deps\.mjs && /);
    const installer = readFileSync(join(root, "scripts", "install-test-deps.mjs"), "utf8");
    for (const dir of readdirSync(join(root, "test", "clis")))
      assert.match(installer, new RegExp(`test/clis/${dir}\\b`));
  });
});
