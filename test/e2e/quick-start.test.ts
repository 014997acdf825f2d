// The built CLI answers `ralph status`, `ralph list` and `ralph hook handle` from files of their own
// (quick-status.cjs, quick-hook.cjs) instead of the command tree: each answer must be the full CLI's
// (full.js), byte for byte.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RALPH, cleanEnv, finishWithin, resultOf, runRalph, tempProjects } from "../helpers/cli.js";

const FULL = join(dirname(RALPH), "full.js");
const MODULE_LOG = fileURLToPath(new URL("../fixtures/module-log.js", import.meta.url));
// No session id leaks in from a Claude Code session the tests may run under.
const ENV = Object.fromEntries(Object.entries(cleanEnv()).filter(([name]) => !name.startsWith("CLAUDE")));
const project = tempProjects("ralph-quick-start-");

/** What one call did, and which of ralph's files it loaded. */
interface Seen {
  code: number | null;
  stdout: string;
  stderr: string;
  modules: string[];
}

let calls = 0;

/** Runs `node entry args` in `cwd` with `stdin` piped in; records the ralph modules it loaded. */
async function call(entry: string, args: string[], cwd: string, stdin: string): Promise<Seen> {
  const log = join(dirname(cwd), `${basename(cwd)}-modules-${++calls}`);
  const child = spawn(process.execPath, ["--import", MODULE_LOG, entry, ...args], {
    cwd,
    env: { ...ENV, MODULE_LOG: log },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(stdin);
  const { code, stdout, stderr } = await finishWithin({ child, done: resultOf(child) }, 30_000);
  let modules: string[] = [];
  try {
    // Each file once, where it was first loaded (a CommonJS file an ES module loader loads is seen twice).
    modules = [
      ...new Set(
        readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .filter((url) => url.includes("/dist/src/"))
          .map((url) => basename(url)),
      ),
    ];
  } catch {
    // Nothing loaded through the hook.
  }
  rmSync(log, { force: true });
  return { code, stdout, stderr, modules };
}

/** The run's age is the one figure that moves between two calls (in JSON, and last on a line of `ralph list`). */
function steady(text: string): string {
  return text.replace(/"age_seconds":\d+/g, '"age_seconds":0').replace(/ \d+[smhd]$/gm, " 0s");
}

/** `ralph ARGS` through the quick path and through the full CLI: same exit code, stdout and stderr. */
async function sameAnswer(
  args: string[],
  cwd: string,
  stdin: (cwd: string) => string = () => "",
  quickCwd = cwd,
): Promise<Seen> {
  const quick = await call(RALPH, args, quickCwd, stdin(quickCwd));
  const full = await call(FULL, args, cwd, stdin(cwd));
  assert.ok(full.modules.includes("full.js"), `the full CLI ran for ${args.join(" ")}`);
  const where = (text: string, dir: string) => steady(text).replaceAll(dir, "<project>");
  assert.deepEqual(
    { code: quick.code, stdout: where(quick.stdout, quickCwd), stderr: where(quick.stderr, quickCwd) },
    { code: full.code, stdout: where(full.stdout, cwd), stderr: where(full.stderr, cwd) },
    `ralph ${args.join(" ")}: the quick path's answer is the full CLI's`,
  );
  return quick;
}

/** Asserts the quick answer came from main.cjs and `file` alone (no command tree, no chunks). */
function tookQuickPath(seen: Seen, file: string): void {
  assert.deepEqual(seen.modules, ["main.cjs", file]);
}

/** Asserts the quick hook went on to the loop's own entry (hook-stop.js and its chunks), never to the command tree. */
function tookLoopPath(seen: Seen): void {
  assert.deepEqual(seen.modules.slice(0, 3), ["main.cjs", "quick-hook.cjs", "hook-stop.js"]);
  assert.ok(!seen.modules.includes("full.js"), seen.modules.join(" "));
}

/** A preload (CommonJS, so that it loads nothing of its own) writing the process's list of Node's own modules at exit. */
const BUILTIN_LOG = `const { writeFileSync } = require("node:fs");
process.on("exit", () => writeFileSync(process.env.BUILTIN_LOG, process.moduleLoadList.join("\\n")));
`;

/** The Node modules `node entry args` loaded in `cwd` (process.moduleLoadList, "NativeModule crypto" and so on), `stdin` piped in. */
function builtinsLoaded(entry: string, args: string[], cwd: string, stdin = ""): Promise<string[]> {
  const preload = join(dirname(cwd), `${basename(cwd)}-builtin-log.cjs`);
  const log = join(dirname(cwd), `${basename(cwd)}-builtins-${++calls}`);
  writeFileSync(preload, BUILTIN_LOG);
  const child = spawn(process.execPath, ["--require", preload, entry, ...args], {
    cwd,
    env: { ...ENV, BUILTIN_LOG: log },
    stdio: ["pipe", "ignore", "inherit"],
  });
  child.stdin.end(stdin);
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve, reject) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        assert.equal(code, 0, `${entry} ${args.join(" ")}`);
        resolve(readFileSync(log, "utf8").split("\n"));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      } finally {
        rmSync(log, { force: true });
        rmSync(preload, { force: true });
      }
    }),
  );
}

/** `node entry args` with its stdout a pipe nobody reads any more: its exit code and stderr. */
function intoClosedPipe(entry: string, args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [entry, ...args], { cwd, env: ENV, stdio: ["ignore", "pipe", "pipe"] });
  // Closed before the child, still starting Node, can write a byte.
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

describe("quick start paths answer as the full CLI does", () => {
  test("ralph status: no runs, ended runs by default and by id, --json, an unknown id, a broken run", async () => {
    const dir = project();
    tookQuickPath(await sameAnswer(["status"], dir), "quick-status.cjs");
    await sameAnswer(["status", "--json"], dir);
    assert.equal((await runRalph(["run", "-n", "1", "--name", "first", "x", "--", "true"], dir, ENV)).code, 3);
    assert.equal((await runRalph(["run", "-n", "1", "--name", "second", "x", "--", "false"], dir, ENV)).code, 3);
    const latest = await sameAnswer(["status"], dir);
    tookQuickPath(latest, "quick-status.cjs");
    assert.match(latest.stdout, /^run {8}second /);
    for (const args of [
      ["status", "--json"],
      ["status", "first"],
      ["status", "first", "--json"],
      ["status", "--json", "second"],
      ["status", "nosuch"],
      ["status", "nosuch", "--json"],
    ]) {
      tookQuickPath(await sameAnswer(args, dir), "quick-status.cjs");
    }
    // A run directory whose status.json is not JSON, and one that is a file.
    mkdirSync(join(dir, ".ralph", "runs", "broken"));
    writeFileSync(join(dir, ".ralph", "runs", "broken", "status.json"), "{ not json");
    writeFileSync(join(dir, ".ralph", "runs", "plain"), "x");
    for (const args of [["status", "broken"], ["status", "broken", "--json"], ["status", "plain"], ["status"]])
      await sameAnswer(args, dir);
  });

  test("ralph list: no runs, ended runs and a foreign one, --json and --active in any order; other shapes go to the full CLI", async () => {
    const dir = project();
    const shapes = [
      ["list"],
      ["list", "--json"],
      ["list", "--active"],
      ["list", "--active", "--json"],
      ["list", "--json", "--active"],
    ];
    for (const args of shapes) tookQuickPath(await sameAnswer(args, dir), "quick-status.cjs");
    assert.equal((await runRalph(["run", "-n", "1", "--name", "first", "x", "--", "true"], dir, ENV)).code, 3);
    assert.equal((await runRalph(["run", "-n", "1", "--name", "second", "x", "--", "false"], dir, ENV)).code, 3);
    // A run directory ralph has no record of (foreign), with a copy of a real run's status.json.
    mkdirSync(join(dir, ".ralph", "runs", "planted"));
    cpSync(join(dir, ".ralph", "runs", "first", "status.json"), join(dir, ".ralph", "runs", "planted", "status.json"));
    for (const args of shapes) {
      const seen = await sameAnswer(args, dir);
      tookQuickPath(seen, "quick-status.cjs");
      if (!args.includes("--active")) assert.match(seen.stdout, /planted/);
    }
    for (const args of [
      ["list", "--json", "--json"],
      ["list", "x"],
      ["list", "--nosuch"],
      ["list", "--help"],
    ]) {
      const through = await call(RALPH, args, dir, "");
      assert.deepEqual(through.modules, ["main.cjs", "full.cjs"], `ralph ${args.join(" ")}`);
    }
  });

  test("ralph list where the runs directory is not one: the quick path says so as the full CLI does", async () => {
    const dir = project();
    mkdirSync(join(dir, ".ralph"));
    writeFileSync(join(dir, ".ralph", "runs"), "not a directory");
    const seen = await sameAnswer(["list"], dir);
    assert.notEqual(seen.code, 0);
  });

  test("ralph status where reading the runs fails: the quick path hands over to the full CLI's wording", async () => {
    const dir = project();
    mkdirSync(join(dir, ".ralph"));
    writeFileSync(join(dir, ".ralph", "runs"), "not a directory");
    const seen = await sameAnswer(["status"], dir);
    assert.notEqual(seen.code, 0);
  });

  test("ralph status loads none of Node's crypto, stream or promise-based file modules; the full CLI's does load the last two", async () => {
    const dir = project();
    assert.equal((await runRalph(["run", "-n", "1", "--name", "done", "x", "--", "true"], dir, ENV)).code, 3);
    const heavy = ["NativeModule crypto", "NativeModule stream", "NativeModule fs/promises"];
    for (const args of [["status"], ["status", "--json"], ["status", "done"]]) {
      const quick = await builtinsLoaded(RALPH, args, dir);
      assert.deepEqual(
        heavy.filter((name) => quick.includes(name)),
        [],
        `ralph ${args.join(" ")}`,
      );
    }
    // Control: the probe sees these modules where they are loaded.
    const full = await builtinsLoaded(FULL, ["status"], dir);
    assert.deepEqual(
      heavy.filter((name) => full.includes(name)),
      ["NativeModule stream", "NativeModule fs/promises"],
    );
  });

  test("--version and hook handle with no loop load nothing of Node's beyond an empty CommonJS file but the signal binding (and vm for the hook's code cache); the full CLI loads its module loader and streams", async () => {
    const dir = project();
    const input = JSON.stringify({
      session_id: "s1",
      transcript_path: "/nonexistent",
      cwd: dir,
      hook_event_name: "Stop",
      stop_hook_active: false,
    });
    const empty = join(dir, "empty.cjs");
    writeFileSync(empty, "");
    const bare = new Set(await builtinsLoaded(empty, [], dir));
    const cases = [
      [["--version"], "", []],
      [["hook", "handle"], input, ["NativeModule vm"]],
    ] as const;
    for (const [args, stdin, more] of cases) {
      const quick = await builtinsLoaded(RALPH, [...args], dir, stdin);
      // The SIGUSR1 listener that keeps the inspector shut, and what loads a file through its code cache.
      assert.deepEqual(
        quick.filter((name) => !bare.has(name)),
        ["Internal Binding signal_wrap", ...more],
        `ralph ${args.join(" ")}`,
      );
      // Control: the probe sees what the full CLI loads.
      const full = await builtinsLoaded(FULL, [...args], dir, stdin);
      const heavy = [
        "NativeModule internal/modules/esm/loader",
        "NativeModule stream",
        "NativeModule net",
        "NativeModule os",
      ];
      assert.deepEqual(
        heavy.filter((name) => full.includes(name) && !bare.has(name)),
        heavy,
        `full CLI: ralph ${args.join(" ")}`,
      );
    }
  });

  test("hook handle deciding a stop of an active loop loads none of Node's crypto; a loop with a --check does, to run it", async () => {
    const input = (cwd: string) =>
      JSON.stringify({
        session_id: "s1",
        transcript_path: "/nonexistent",
        cwd,
        hook_event_name: "Stop",
        stop_hook_active: false,
        last_assistant_message: "working",
      });
    const stopLoads = async (start: string[]): Promise<string[]> => {
      const dir = project();
      assert.equal((await runRalph(["hook", "start", "Do", "it", "-n", "3", ...start], dir, ENV)).code, 0);
      return builtinsLoaded(RALPH, ["hook", "handle"], dir, input(dir));
    };
    assert.equal((await stopLoads([])).includes("NativeModule crypto"), false);
    // Control: the probe sees crypto where a stop loads it (a check runs as a supervised command).
    assert.equal((await stopLoads(["--check", "true"])).includes("NativeModule crypto"), true);
  });

  test("every other command runs the full CLI as one file from its code cache (full.cjs), answering as its ES module build does", async () => {
    const dir = project();
    for (const args of [["--help"], ["list", "--nosuch"], ["status", "--nosuch"], ["nosuch"]]) {
      const through = await call(RALPH, args, dir, "");
      assert.deepEqual(through.modules, ["main.cjs", "full.cjs"], `ralph ${args.join(" ")}`);
      const full = await call(FULL, args, dir, "");
      assert.deepEqual(
        { code: through.code, stdout: through.stdout, stderr: through.stderr },
        { code: full.code, stdout: full.stdout, stderr: full.stderr },
        `ralph ${args.join(" ")}`,
      );
    }
    const run = await call(RALPH, ["run", "-n", "1", "--name", "one", "x", "--", "true"], dir, "");
    assert.equal(run.code, 3, run.stderr);
    assert.deepEqual(run.modules.slice(0, 2), ["main.cjs", "full.cjs"]);
    assert.ok(!run.modules.some((name) => name.startsWith("chunk-") || name === "full.js"), run.modules.join(" "));
  });

  test("ralph status and ralph list into a closed pipe end quietly with exit code 0, as the full CLI does", async () => {
    const dir = project();
    assert.equal((await runRalph(["run", "-n", "1", "--name", "done", "x", "--", "true"], dir, ENV)).code, 3);
    for (const args of [["status"], ["status", "--json"], ["list"], ["list", "--json"]]) {
      const full = await intoClosedPipe(FULL, args, dir);
      assert.deepEqual(full, { code: 0, stderr: "" }, `full CLI: ralph ${args.join(" ")}`);
      assert.deepEqual(await intoClosedPipe(RALPH, args, dir), full, `quick path: ralph ${args.join(" ")}`);
    }
  });

  test("ralph hook handle: no loop file, input that is not JSON, and an active loop deciding a stop", async () => {
    const dir = project();
    const input = (cwd: string) =>
      JSON.stringify({
        session_id: "s1",
        transcript_path: "/nonexistent",
        cwd,
        hook_event_name: "Stop",
        stop_hook_active: false,
        last_assistant_message: "working",
      });
    const idle = await sameAnswer(["hook", "handle"], dir, input);
    tookQuickPath(idle, "quick-hook.cjs");
    assert.deepEqual([idle.code, idle.stdout], [0, ""]);
    // A failure is recorded in the loop's run (if any) by the loop's own code.
    tookLoopPath(await sameAnswer(["hook", "handle"], dir, () => "this is not json"));
    assert.equal((await runRalph(["hook", "start", "Do", "it", "-n", "2"], dir, ENV)).code, 0);
    // Each answer moves the loop on: both paths get the same loop, in two copies of the project.
    const twin = `${dir}-twin`;
    cpSync(dir, twin, { recursive: true });
    after(() => rmSync(twin, { recursive: true, force: true }));
    const stop = await sameAnswer(["hook", "handle"], dir, input, twin);
    assert.match(stop.stdout, /"decision":"block"/);
    tookLoopPath(stop);
  });
});
