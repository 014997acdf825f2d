// After bundle.mjs: writes the V8 code caches of the quick files (FILE.cache beside quick-status.cjs and
// quick-hook.cjs, see src/cli/cached-require.ts), each made after its file has answered a real call, so that
// the functions a call runs are in it, not only the file's top level. Run plainly, it makes a scratch
// project with one real run of the built CLI (its records in the scratch directory too), then runs itself
// there with --warm NAME for each file: `status` answered three ways, the Stop hook given its JSON. Without
// a cache the CLI works the same, only starts slower: a failure here is a warning.
import { Buffer } from "node:buffer";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist", "src", "cli");
/** Each quick file, and the calls that warm it up (what a real call runs). */
const WARM = {
  "quick-status.cjs": async ({ quickStatus }) => {
    for (const [run, json] of [[undefined, false], [undefined, true], ["warm", false]]) {
      const code = await quickStatus(run, json);
      if (code !== 0) throw new Error(`ralph status ${run ?? ""}${json ? " --json" : ""}: exit code ${code}`);
    }
  },
  "quick-hook.cjs": async ({ quickHook }) => {
    const code = await quickHook();
    if (code !== 0) throw new Error(`ralph hook handle: exit code ${code}`);
  },
};

if (process.argv[2] === "--warm") {
  const name = process.argv[3];
  const file = join(cli, name);
  const { compileCommonJs, runCommonJs, BUILD_MARK } = await import(pathToFileURL(join(cli, "cached-require.js")).href);
  const source = readFileSync(file, "utf8");
  const mark = source.trimEnd().split("\n").at(-1);
  if (!mark?.startsWith(BUILD_MARK)) throw new Error(`${file} does not end with its build mark`);
  const script = compileCommonJs(file, source, undefined);
  await WARM[name](runCommonJs(script, file, createRequire(file)));
  writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(`${mark}\n`, "latin1"), script.createCachedData()]));
} else {
  for (const name of Object.keys(WARM)) rmSync(join(cli, `${name}.cache`), { force: true });
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
    // What Claude Code gives the Stop hook; the project has no loop file.
    const hookInput = `${JSON.stringify({ session_id: "warm", transcript_path: "/nonexistent", cwd: project, hook_event_name: "Stop", stop_hook_active: false })}\n`;
    for (const name of Object.keys(WARM)) {
      const warm = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--warm", name], { cwd: project, env, input: hookInput, stdio: ["pipe", "ignore", "pipe"], encoding: "utf8", timeout: 60_000 });
      if (warm.status !== 0) throw new Error(`${name}: ${warm.stderr.trim()}`);
    }
  } catch (error) {
    console.warn(`warning: no code cache for the quick files (ralph status and hook handle start slower): ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
