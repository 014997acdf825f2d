// Installs the test-only CLIs kept outside the main lock file (see test/clis/*/package.json),
// so a fresh clone's `npm test` has everything its integration tests run.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const clis = [{ dir: "test/clis/opencode", bin: "opencode" }];

for (const { dir, bin } of clis) {
  if (existsSync(join(dir, "node_modules", ".bin", bin))) continue;
  console.error(`installing the pinned ${bin} CLI for the tests (${dir})`);
  const result = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: dir,
    stdio: "inherit",
  });
  if (result.status !== 0) {
    console.error(`could not install ${dir}: npm exited ${result.status ?? result.signal}`);
    process.exit(1);
  }
}
