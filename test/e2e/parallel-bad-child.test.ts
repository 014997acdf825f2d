// `--parallel` children are engines in one process: one child's agent ending badly (it crashes of SIGSEGV, or
// its cgroup's --memory-max OOM-kills its tree) must not disturb its siblings, which run on and end DONE,
// while the parent reports the bad child as failed. Each bad ending is checked to have really happened.
// `ralph stop --now CHILD` reaches that child alone in the same way.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, RALPH, readEvents, readStatus, runRalph } from "../helpers/cli.js";
import { waitFor, within } from "../helpers/wait.js";
import { git, isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

after(isolateGitConfig());
const cleanup = cleanupAfterTests();

const env = (extra: NodeJS.ProcessEnv = {}) =>
  cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1", ...extra });
const runDir = (repo: string, id: string) => join(repo, ".ralph", "runs", id);

/**
 * A bash agent: on US-1 it does `bad.us1` (crashes of SIGSEGV unless told), on US-2 `bad.us2` if given; on any
 * other story it first waits until the parent has seen `bad.count` children end (bounded), then marks its story done.
 */
function agentScript(repo: string, bad: { us1?: string; us2?: string; count: number }): string[] {
  const events = join(runDir(repo, "b"), "events.jsonl");
  const mark = `${JSON.stringify(process.execPath)} -e 'const fs = require("fs"); const prd = JSON.parse(fs.readFileSync("prd.json", "utf8")); for (const s of prd.userStories) if (s.id === process.argv[1]) s.passes = true; fs.writeFileSync("prd.json", JSON.stringify(prd, null, 2) + "\\n")' "$id"`;
  const script = `id=$(awk '/^## Current task/ { getline; getline; sub(/:.*/, ""); print; exit }')
case "$id" in
  US-1) ${bad.us1 ?? "kill -SEGV $$"} ;;
${bad.us2 === undefined ? "" : `  US-2) ${bad.us2} ;;\n`}  *) for _ in $(seq 1 300); do [ "$(grep -c '"type":"child_ended"' ${JSON.stringify(events)} 2>/dev/null)" -ge ${bad.count} ] && break; sleep 0.1; done
     echo "saw $(grep -c '"type":"child_ended"' ${JSON.stringify(events)}) children end before finishing $id"
     ${mark} ;;
esac`;
  const file = join(repo, "..", `${repo.split("/").pop()}-agent.sh`);
  writeFileSync(file, script);
  return ["bash", file];
}

/** Whether cgroup supervision with a memory controller works here, from `ralph doctor --json`. */
function memoryCapMissing(): string | null {
  if (process.platform !== "linux") return "Linux only";
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv({ RALPH_SUPERVISION: "cgroup" }),
    encoding: "utf8",
    timeout: 60_000,
  });
  if (result.status !== 0) return "cgroup supervision unavailable here";
  const source =
    (JSON.parse(result.stdout) as { supervision: { controllers: Record<string, string> } }).supervision.controllers
      .memory ?? "unavailable";
  return source.startsWith("unavailable") ? `the memory controller is ${source}` : null;
}

/** Runs parent `b` over the three stories, all three children at once, and waits for it to end. */
async function fanOut(repo: string, agent: string[], extra: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const parent = cleanup.ralph(
    [
      "run",
      "--tasks",
      "prd.json",
      "--parallel",
      "3",
      "-n",
      "1",
      "--max-failures",
      "1",
      "--grace",
      "200ms",
      "--name",
      "b",
      ...extra,
      "work",
      "--",
      ...agent,
    ],
    repo,
    env(extraEnv),
  );
  return within(parent.done, 60_000, "the parent to end");
}

/** Asserts that the siblings (the children on `good` stories) ran through the bad endings to DONE, merged. */
function siblingsDone(repo: string, good: string[], bad: number): void {
  const ended = readEvents(runDir(repo, "b")).filter((event) => event.type === "child_ended");
  for (const task of good) {
    const child = ended.find((event) => event.task === task);
    assert.equal(child?.reason, "DONE", `${task}: ${JSON.stringify(child)}`);
    const id = child?.child as string;
    // One iteration, one agent: it was running all along, and saw the bad children end before it finished.
    assert.equal(readStatus(runDir(repo, id)).iteration, 1);
    const output = readEvents(runDir(repo, id))
      .filter((event) => event.type === "agent_event")
      .map((event) => JSON.stringify(event))
      .join("\n");
    assert.match(output, new RegExp(`saw ${bad} children end before finishing ${task}`));
  }
  const prd = JSON.parse(git(repo, "show", "ralph/b:prd.json")) as {
    userStories: Array<{ id: string; passes: boolean }>;
  };
  for (const story of prd.userStories) assert.equal(story.passes, good.includes(story.id), story.id);
}

describe("--parallel: a child's agent ending badly leaves its siblings alone", { concurrency: 1 }, () => {
  test("a child's agent that crashes of SIGSEGV: that child FAILED, the parent says so (exit 1), its siblings end DONE", async () => {
    const repo = storiesRepo();
    const result = await fanOut(repo, agentScript(repo, { count: 1 }), []);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const ended = readEvents(runDir(repo, "b")).filter((event) => event.type === "child_ended");
    const crashed = ended.find((event) => event.task === "US-1");
    assert.equal(crashed?.reason, "FAILED", JSON.stringify(crashed));
    // Control: the harness really crashed that child's agent.
    const iteration = readEvents(runDir(repo, crashed?.child as string)).find(
      (event) => event.type === "iteration_ended",
    );
    assert.equal(iteration?.exit_signal, "SIGSEGV", JSON.stringify(iteration));
    assert.match(String(crashed?.detail), /SIGSEGV/);
    assert.match(
      readStatus(runDir(repo, "b")).last_action as string,
      new RegExp(`^1 task\\(s\\) left pending: child ${String(crashed?.child)} ended FAILED: .*SIGSEGV`),
    );
    siblingsDone(repo, ["US-2", "US-3"], 1);
  });

  test(
    "a child's agent tree OOM-killed by its --memory-max: that child FAILED naming memory, its siblings end DONE",
    { skip: memoryCapMissing() ?? false },
    async () => {
      const repo = storiesRepo();
      const hog = `perl -e '$x = "a" x (200 * 1024 * 1024); sleep 30'; sleep 30`;
      const result = await fanOut(repo, agentScript(repo, { us2: hog, count: 2 }), ["--memory-max", "32M"], {
        RALPH_SUPERVISION: "cgroup",
      });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      const ended = readEvents(runDir(repo, "b")).filter((event) => event.type === "child_ended");
      const oomed = ended.find((event) => event.task === "US-2");
      assert.equal(oomed?.reason, "FAILED");
      assert.match(String(oomed?.detail), /memory/);
      // Control: the harness really had that child's tree OOM-killed by its cgroup's cap.
      const iteration = readEvents(runDir(repo, oomed?.child as string)).find(
        (event) => event.type === "iteration_ended",
      );
      assert.equal(iteration?.ended_by, "memory_cap", JSON.stringify(iteration));
      assert.ok((iteration?.resources as { oom_kills: number }).oom_kills >= 1);
      assert.equal(ended.find((event) => event.task === "US-1")?.reason, "FAILED");
      assert.match(readStatus(runDir(repo, "b")).last_action as string, /^2 task\(s\) left pending: /);
      siblingsDone(repo, ["US-3"], 2);
      assert.doesNotMatch(readFileSync(join(repo, "prd.json"), "utf8"), /"passes": true/);
    },
  );

  test("ralph stop --now CHILD ends that child's agent alone (STOPPED); its siblings in the same process run on to DONE", async () => {
    const repo = storiesRepo();
    const ready = join(repo, "..", `${repo.split("/").pop()}-ready`);
    const parent = cleanup.ralph(
      [
        "run",
        "--tasks",
        "prd.json",
        "--parallel",
        "3",
        "-n",
        "1",
        "--max-failures",
        "1",
        "--grace",
        "200ms",
        "--name",
        "b",
        "work",
        "--",
        ...agentScript(repo, { us1: `touch ${JSON.stringify(ready)}; sleep 30`, count: 1 }),
      ],
      repo,
      env(),
    );
    await waitFor(() => existsSync(ready), "the US-1 agent to start", 20_000);
    // The other children may still be starting: ask again (bounded) until status lists all three running.
    const states = async () =>
      (
        JSON.parse((await runRalph(["status", "--json", "b"], repo, env())).stdout) as {
          children: Array<{ state: string }>;
        }
      ).children.map((child) => child.state);
    let shown = await states();
    for (const started = Date.now(); shown.join() !== "running,running,running" && Date.now() - started < 20_000;)
      shown = await states();
    assert.deepEqual(shown, ["running", "running", "running"]);
    const stopped = await runRalph(["stop", "--now", "b-1"], repo, env());
    assert.equal(stopped.code, 0, stopped.stderr);
    const result = await within(parent.done, 60_000, "the parent to end");
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(readStatus(runDir(repo, "b-1")).exit_reason, "STOPPED");
    assert.match(result.stdout, /child b-1 ended STOPPED; task US-1 stays pending: stop --now ended the agent/);
    siblingsDone(repo, ["US-2", "US-3"], 1);
  });
});
