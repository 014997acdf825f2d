// Installs what `npm test` needs beyond the main lock file: the test-only CLIs (see test/clis/*/package.json),
// Debian's chromium for the dashboard's browser tests and Debian's bubblewrap for the --sandbox tests, so a
// fresh clone's `npm test` has everything.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
// Each CLI the tests run for real, pinned with its lock file in a directory of its own: together about
// 750 MB that a plain `npm install` of ralph never downloads.
const clis = [
  { dir: "test/clis/claude", bin: "claude" },
  { dir: "test/clis/codex", bin: "codex" },
  { dir: "test/clis/gemini", bin: "gemini" },
  { dir: "test/clis/opencode", bin: "opencode" },
];
const CHROMIUM = "/usr/bin/chromium";
const BWRAP = "/usr/bin/bwrap";

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

function run(program, args) {
  const result = spawnSync(program, args, {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}

// The browser tests drive Debian's chromium package (not a downloaded browser build).
if (!existsSync(CHROMIUM)) {
  const skip = process.env.RALPH_SKIP_BROWSER_TESTS === "1";
  const canApt = process.getuid?.() === 0 && existsSync("/usr/bin/apt-get");
  if (canApt) {
    console.error(`installing Debian's chromium for the browser tests (${CHROMIUM} is missing)`);
    if (!(run("apt-get", ["update"]) && run("apt-get", ["install", "-y", "chromium"])) && !skip) {
      console.error(
        "could not install chromium with apt-get; install it (apt-get install -y chromium) or set RALPH_SKIP_BROWSER_TESTS=1",
      );
      process.exit(1);
    }
  } else if (skip) {
    console.error(`*** ${CHROMIUM} is missing and RALPH_SKIP_BROWSER_TESTS=1: the browser tests will be SKIPPED ***`);
  } else {
    console.error(
      `${CHROMIUM} is missing: the dashboard's browser tests need Debian's chromium package.\n` +
        "Install it as root (apt-get install -y chromium), run npm test as root on Debian to have it installed,\n" +
        "or set RALPH_SKIP_BROWSER_TESTS=1 to skip those tests.",
    );
    process.exit(1);
  }
}

// The --sandbox tests drive Debian's bubblewrap; without it they report the sandbox as unavailable and skip.
if (!existsSync(BWRAP)) {
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.error(`installing Debian's bubblewrap for the sandbox tests (${BWRAP} is missing)`);
    if (!(run("apt-get", ["update"]) && run("apt-get", ["install", "-y", "bubblewrap"]))) {
      console.error("could not install bubblewrap with apt-get; install it (apt-get install -y bubblewrap)");
      process.exit(1);
    }
  } else {
    console.error(`*** ${BWRAP} is missing: the --sandbox tests will be SKIPPED (install the bubblewrap package) ***`);
  }
}
