// Requests from inside a run are refused, whatever the process did to detach: an agent answering its own
// question through ANSWER, an agent speaking for the person to another run (`env -i ralph answer|set|stop|
// continue`), a detached `env -i setsid ralph set`, and a set request naming a holder process.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  agentAfter,
  cleanEnv,
  completionMarker,
  fakeAgent,
  finishWithin,
  RALPH,
  readEvents,
  readStatus,
  runRalph,
  startRalph,
  tempProjects,
} from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const project = tempProjects("ralph-inside-");
const children: ChildProcess[] = [];
const strays: string[] = [];
after(() => {
  children.forEach((child) => child.kill("SIGKILL"));
  // A holder started by a tree-mode agent escapes its run on purpose: end it here.
  for (const file of strays) {
    try {
      process.kill(Number(readFileSync(file, "utf8").trim()), "SIGKILL");
    } catch {
      // already gone
    }
  }
});

function start(dir: string, args: string[], mode?: string) {
  const started = startRalph(args, dir, cleanEnv(mode ? { RALPH_SUPERVISION: mode } : {}));
  children.push(started.child);
  return started;
}

const runDir = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const ralph = `"${process.execPath}" "${RALPH}"`;
/** What `env -i` keeps: PATH, and the state directory of the runners' records when the tests moved it. */
const kept = `PATH="$PATH"${process.env.XDG_STATE_HOME ? ` XDG_STATE_HOME="${process.env.XDG_STATE_HOME}"` : ""}`;
/** Shell lines that wait (at most 10 s) until FILE holds a line starting with "exit". */
const awaitExit = (file: string) =>
  `i=0; while ! grep -q '^exit' "${file}" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done`;

const waitForQuestion = (dir: string, id: string) =>
  waitFor(
    () => existsSync(join(runDir(dir, id), "status.json")) && readStatus(runDir(dir, id)).state === "needs_human",
    `run ${id} to wait for an answer`,
  );

describe("requests from inside a run", () => {
  test("an agent that writes ANSWER before its <ask> is not answered: the run waits for the person, whose answer counts", async () => {
    const dir = project();
    const selfAnswer = `[ "$RALPH_ITERATION" = 1 ] && printf 'Yes, delete it' > "$RALPH_RUN_DIR/ANSWER"; true`;
    const run = start(dir, [
      "run",
      "--name",
      "a",
      "-n",
      "3",
      "--completion-promise",
      "FIN",
      "go",
      ...agentAfter(
        selfAnswer,
        "--ask",
        "May I delete the production database?",
        "--ask-in",
        "1",
        "--promise",
        "FIN",
        "--promise-from",
        "2",
      ),
    ]);
    await waitForQuestion(dir, "a");
    assert.equal(readStatus(runDir(dir, "a")).question, "May I delete the production database?");
    assert.equal(existsSync(join(runDir(dir, "a"), "ANSWER")), false, "the agent's ANSWER was removed");
    const refused = readEvents(runDir(dir, "a")).filter((event) => event.type === "control_refused");
    assert.deepEqual(
      refused.map((event) => [event.iteration, event.file]),
      [[1, "ANSWER"]],
    );
    assert.match(
      readFileSync(join(runDir(dir, "a"), "run.log"), "utf8"),
      /ANSWER not taken: written while the agent ran/,
    );
    const answered = await runRalph(["answer", "a", "No, never"], dir);
    assert.equal(answered.code, 0, answered.stderr);
    const result = await finishWithin(run, 20_000);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      readEvents(runDir(dir, "a"))
        .filter((event) => event.type === "answered")
        .map((event) => event.answer),
      ["No, never"],
    );
  });

  test("run A's agent cannot answer, set, stop or continue run B, even with env -i", async () => {
    const dir = project();
    const ended = await runRalph(["run", "--name", "c", "-n", "1", "go", ...fakeAgent()], dir);
    assert.equal(ended.code, 3, ended.stderr);
    const waiting = start(dir, [
      "run",
      "--name",
      "b",
      "-n",
      "3",
      "go",
      ...fakeAgent("--ask", "Which database?", "--ask-in", "1"),
    ]);
    await waitForQuestion(dir, "b");
    const requests: Array<[string, string]> = [
      ["answer", "answer b yes"],
      ["set", "set b max_iterations=0"],
      ["stop", "stop b"],
      ["continue", "continue c -n 3"],
    ];
    const script = requests
      .map(
        ([name, words]) =>
          `env -i ${kept} ${ralph} ${words} > "${dir}/${name}.out" 2>&1; echo "exit $?" >> "${dir}/${name}.out"`,
      )
      .join("; ");
    const attacker = await runRalph(["run", "--name", "a", "-n", "1", "go", ...agentAfter(script)], dir);
    assert.equal(attacker.code, 3, attacker.stderr);
    for (const [name] of requests) {
      const said = readFileSync(join(dir, `${name}.out`), "utf8");
      assert.match(
        said,
        new RegExp(
          `^ralph: ralph ${name} is for people: it does not run inside the agent of a ralph run \\(.+\\)\\nexit 2\\n$`,
        ),
        name,
      );
    }
    assert.equal(readStatus(runDir(dir, "b")).state, "needs_human", "b still waits for its person");
    assert.equal(existsSync(join(runDir(dir, "b"), "ANSWER")), false);
    assert.equal(existsSync(join(runDir(dir, "b"), "STOP")), false);
    assert.equal(readStatus(runDir(dir, "c")).iteration, 1, "c was not continued");
    assert.equal((await runRalph(["stop", "--now", "b"], dir)).code, 0);
    await finishWithin(waiting, 20_000);
  });

  /** A --check false run whose agent detaches `env -i setsid ralph set RUN max_iterations=0 check=true`. */
  async function detachedSet(mode: string): Promise<{ code: number | null; said: string; dir: string }> {
    const dir = project();
    const out = join(dir, "detached.out");
    const detach = `( env -i ${kept} setsid sh -c '${ralph.replace(/"/g, "")} set "$0" max_iterations=0 check=true; echo "exit $?"' "$RALPH_RUN_ID" > "${out}" 2>&1 & ); ${awaitExit(out)}`;
    const result = await finishWithin(
      start(dir, ["run", "--name", "d", "-n", "1", "--check", "false", "go", ...agentAfter(detach)], mode),
      30_000,
    );
    return { code: result.code, said: existsSync(out) ? readFileSync(out, "utf8") : "", dir };
  }

  for (const mode of ["cgroup", "subreaper"]) {
    test(`${mode} mode: a detached env -i setsid ralph set from the agent is refused; the --check false run does not end DONE`, async () => {
      const { code, said, dir } = await detachedSet(mode);
      assert.match(said, /is for people: it does not run inside the agent of a ralph run/);
      assert.match(said, /exit 2\n$/);
      assert.equal(code, 3);
      assert.deepEqual(completionMarker(runDir(dir, "d")), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
    });
  }

  test("known-false control: in tree mode the same detached request cannot be told apart and is taken (what --sandbox closes)", async () => {
    const { code, said, dir } = await detachedSet("tree");
    assert.match(said, /applied/);
    assert.equal(code, 0);
    assert.deepEqual(completionMarker(runDir(dir, "d")), ["completion_reason=DONE", "promise=COMPLETE"]);
  });

  test('a set request naming a holder process (sh -c "sleep 8" set RUN) is refused, even where nothing else tells it apart', async () => {
    const dir = project();
    const pidFile = join(dir, "holder.pid");
    strays.push(pidFile);
    const out = join(dir, "holder.out");
    const forge = [
      `( env -i setsid sh -c 'sleep 8; :' set "$RALPH_RUN_ID" < /dev/null > /dev/null 2>&1 & echo $! > "${pidFile}" )`,
      `pid=$(cat "${pidFile}")`,
      `i=0; while ! grep -q 'set' /proc/$pid/cmdline 2>/dev/null && [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done`,
      `pidstart=$(sed 's/.*) //' /proc/$pid/stat | cut -d' ' -f20)`,
      `printf '{"words":["max_iterations=0","check=true"],"pid":%s,"pid_start":"%s"}\\n' "$pid" "$pidstart" > "$RALPH_RUN_DIR/requests/forged.tmp"`,
      `mv "$RALPH_RUN_DIR/requests/forged.tmp" "$RALPH_RUN_DIR/requests/set-h-abcdef.request.json"`,
      `i=0; while [ ! -e "$RALPH_RUN_DIR/requests/set-h-abcdef.result.json" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done`,
      `cat "$RALPH_RUN_DIR/requests/set-h-abcdef.result.json" > "${out}"`,
    ].join("; ");
    // Tree mode: the holder detached, so only the check of its command line can refuse it.
    const result = await finishWithin(
      start(dir, ["run", "--name", "h", "-n", "1", "--check", "false", "go", ...agentAfter(forge)], "tree"),
      30_000,
    );
    assert.match(
      readFileSync(out, "utf8"),
      /"ok":false,"message":"refused: the requesting process is not ralph set for this run"/,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(completionMarker(runDir(dir, "h")), ["completion_reason=MAX_ITERATIONS", "promise=COMPLETE"]);
  });
});
