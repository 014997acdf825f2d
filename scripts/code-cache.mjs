// After bundle.mjs: writes the V8 code caches of the CLI's cached files (FILE.cache beside quick-status.cjs,
// quick-hook.cjs and full.cjs, see src/cli/cached-require.ts), each made after its file has answered a real
// call, so that the functions a call runs are in it, not only the file's top level. Run plainly, it runs
// itself with --warm NAME in a scratch project (its records in the scratch directory too) for each file:
// the full CLI doing a real one-iteration run, then `status` answered three ways about it, the Stop hook
// given its JSON. Without a cache the CLI works the same, only starts slower: a failure here is a warning.
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
    for (const [run, json] of [
      [undefined, false],
      [undefined, true],
      ["warm", false],
    ]) {
      const code = await quickStatus(run, json);
      if (code !== 0) throw new Error(`ralph status ${run ?? ""}${json ? " --json" : ""}: exit code ${code}`);
    }
  },
  "quick-hook.cjs": async ({ quickHook }) => {
    const code = await quickHook();
    if (code !== 0) throw new Error(`ralph hook handle: exit code ${code}`);
  },
};

/** The full CLI's call: a real run of one iteration (exit code 3, MAX_ITERATIONS), its agent this node (a `true` found on npm's PATH could be any package's). */
const FULL_RUN = ["run", "-n", "1", "--name", "warm", "--agent", "command", "warm", "--", process.execPath, "-e", "0"];

if (process.argv[2] === "--warm") {
  const name = process.argv[3];
  const file = join(cli, name);
  const { compileCommonJs, runCommonJs, BUILD_MARK } = await import(pathToFileURL(join(cli, "cached-require.js")).href);
  const source = readFileSync(file, "utf8");
  const mark = source.trimEnd().split("\n").at(-1);
  if (!mark?.startsWith(BUILD_MARK)) throw new Error(`${file} does not end with its build mark`);
  const script = compileCommonJs(file, source, undefined);
  const write = () =>
    writeFileSync(`${file}.cache`, Buffer.concat([Buffer.from(`${mark}\n`, "latin1"), script.createCachedData()]));
  if (name === "full.cjs") {
    // The full CLI runs at its load, as main.cjs runs it, and ends when its run has: the cache is made at
    // exit, when V8 has compiled what the run needed (and under the flag the CLI set, as main.cjs sets it).
    process.argv = [process.execPath, join(cli, "main.cjs"), ...FULL_RUN];
    process.on("exit", (code) => {
      if (code === 3) write();
    });
    runCommonJs(script, file, createRequire(file));
  } else {
    await WARM[name](runCommonJs(script, file, createRequire(file)));
    write();
  }
} else {
  const names = ["full.cjs", ...Object.keys(WARM)];
  for (const name of names) rmSync(join(cli, `${name}.cache`), { force: true });
  const scratch = mkdtempSync(join(tmpdir(), "ralph-code-cache-"));
  try {
    const project = join(scratch, "project");
    mkdirSync(project);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: scratch, XDG_STATE_HOME: join(scratch, "state") };
    // What Claude Code gives the Stop hook; the project has no loop file.
    const hookInput = `${JSON.stringify({ session_id: "warm", transcript_path: "/nonexistent", cwd: project, hook_event_name: "Stop", stop_hook_active: false })}\n`;
    for (const name of names) {
      const warm = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--warm", name], {
        cwd: project,
        env,
        input: hookInput,
        stdio: ["pipe", "ignore", "pipe"],
        encoding: "utf8",
        timeout: 60_000,
      });
      // The full CLI's run ends with exit code 3: MAX_ITERATIONS, as asked.
      if (warm.status !== (name === "full.cjs" ? 3 : 0))
        throw new Error(`${name}: exit ${warm.status ?? warm.signal}: ${warm.stderr.trim()}`);
    }
  } catch (error) {
    console.warn(
      `warning: not every code cache was written (ralph starts slower without one): ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
