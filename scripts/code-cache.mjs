// After bundle.mjs: writes the V8 code cache of quick-status.cjs (quick-status.cjs.cache, see
// src/cli/cached-require.ts), made after the file has answered `ralph status` so that the functions a call
// runs are in it, not only the file's top level. Run plainly, it makes a scratch project with one real run
// of the built CLI (its records in the scratch directory too) and runs itself there with --warm, which
// answers `status` three ways and writes the cache. Without a cache the CLI works the same, only starts
// slower: a failure here is a warning.
import { Buffer } from "node:buffer";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist", "src", "cli");
const file = join(cli, "quick-status.cjs");

if (process.argv[2] === "--warm") {
  const { compileCommonJs, runCommonJs, BUILD_MARK } = await import(pathToFileURL(join(cli, "cached-require.js")).href);
  const source = readFileSync(file, "utf8");
  const mark = source.trimEnd().split("\n").at(-1);
  if (!mark?.startsWith(BUILD_MARK)) throw new Error(`${file} does not end with its build mark`);
  const script = compileCommonJs(file, source, undefined);
  const { quickStatus } = runCommonJs(script, file, createRequire(file));
  for (const [run, json] of [[undefined, false], [undefined, true], ["warm", false]]) {
    const code = await quickStatus(run, json);
    if (code !== 0) throw new Error(`ralph status ${run ?? ""}${json ? " --json" : ""}: exit code ${code}`);
  }
  writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(`${mark}\n`, "latin1"), script.createCachedData()]));
} else {
  rmSync(`${file}.cache`, { force: true });
  const scratch = mkdtempSync(join(tmpdir(), "ralph-code-cache-"));
  try {
    const project = join(scratch, "project");
    mkdirSync(project);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, XDG_STATE_HOME: join(scratch, "state") };
    // The agent is this node (a `true` found on npm's PATH could be any package's).
    const agent = [process.execPath, "-e", "0"];
    const run = spawnSync(process.execPath, [join(cli, "main.cjs"), "run", "-n", "1", "--name", "warm", "--agent", "command", "warm", "--", ...agent], { cwd: project, env, encoding: "utf8", timeout: 60_000 });
    // Exit code 3: MAX_ITERATIONS, as asked.
    if (run.status !== 3) throw new Error(`a run for the cache to answer about: exit ${run.status ?? run.signal}: ${run.stderr.trim()}`);
    const warm = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--warm"], { cwd: project, env, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", timeout: 60_000 });
    if (warm.status !== 0) throw new Error(warm.stderr.trim());
  } catch (error) {
    console.warn(`warning: no code cache for quick-status.cjs (ralph status starts slower): ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
