// A Kubernetes Indexed Job simulated on one machine, with the shipped pod-start.sh and job.yaml: each "pod"
// is a new PID namespace whose PID 1 becomes ralph, in a fresh clone of one bare remote, with
// JOB_COMPLETION_INDEX set; pods run `parallelism` at a time and a failed pod is retried or not as the
// manifest's podFailurePolicy says. One pod is sent SIGTERM mid-iteration, as the kubelet does.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RALPH, cleanEnv, completionMarker, readEvents, readStatus } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";
import { KUBERNETES_DIR, argValue, podFailureAction, readJob } from "../helpers/job-manifest.js";
import { cleanupAfterTests, type Started } from "../fixtures/e2e-cleanup.js";
import { survivors, waitForJson } from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";

after(isolateGitConfig());
const cleanup = cleanupAfterTests();

const JOB_AGENT = fileURLToPath(new URL("../fixtures/job-agent.js", import.meta.url));
const POD_START = join(KUBERNETES_DIR, "pod-start.sh");
const UNSHARE = (process.env.PATH ?? "")
  .split(delimiter)
  .map((dir) => join(dir, "unshare"))
  .find((path) => existsSync(path));
const canUnshare =
  UNSHARE !== undefined && spawnSync(UNSHARE, ["--pid", "--fork", "--kill-child", "--mount-proc", "true"]).status === 0;
const hasPerl = spawnSync("perl", ["-e", "1"]).status === 0;
const skip = !canUnshare ? "needs unshare --pid (root)" : !hasPerl ? "needs perl" : false;

const STORIES = [
  { id: "US-1", title: "one", passes: false },
  { id: "US-2", title: "two (two iterations; its first pod is ended mid-iteration)", passes: false },
  { id: "US-3", title: "three", passes: false },
  { id: "US-4", title: "four, already done", passes: true },
];
const GRACE_MS = 2000;

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A bare remote whose main holds the task list and the prompt. */
function bareRemote(): string {
  const seed = tempRepo();
  writeFileSync(join(seed, "prd.json"), `${JSON.stringify({ userStories: STORIES }, null, 2)}\n`);
  writeFileSync(join(seed, "PROMPT.md"), "Work on the current task.\n");
  git(seed, "add", "-A");
  git(seed, "commit", "-q", "-m", "tasks");
  const remote = join(tempDir("ralph-remote-"), "project.git");
  git(seed, "clone", "-q", "--bare", seed, remote);
  return remote;
}

/** A PATH directory whose `ralph` execs the built CLI (so it stays PID 1), as `npm install -g` would provide. */
function ralphOnPath(): string {
  const bin = tempDir("ralph-bin-");
  writeFileSync(join(bin, "ralph"), `#!/bin/sh\nexec '${process.execPath}' '${RALPH}' "$@"\n`, { mode: 0o755 });
  return bin;
}

/** The namespace's PID 1 as the host sees it: unshare's only child. */
function initPid(unsharePid: number): number {
  const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  return Number(children[0] ?? 0);
}

/** Whether a host process is PID 1 of its own namespace (its last NSpid is 1). */
function isNamespaceInit(pid: number): boolean {
  const line = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
  return line.trim().split(/\s+/).at(-1) === "1";
}

/** A webhook receiver collecting event bodies. */
async function webhook(): Promise<{ url: string; events: Array<Record<string, unknown>> }> {
  const events: Array<Record<string, unknown>> = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      events.push(JSON.parse(body) as Record<string, unknown>);
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => server.close());
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/events`, events };
}

interface Pod {
  index: number;
  attempt: number;
  workspace: string;
  started: Started;
}

interface Ended {
  index: number;
  attempt: number;
  code: number | null;
  action: string;
  stderr: string;
}

describe("a simulated Indexed Job of ralph pods", { skip }, () => {
  test("every task ends on its own branch of the remote; a pod ended by SIGTERM exits 143 within the grace and its replacement goes on from its branch", async (t) => {
    const job = readJob();
    const container = job.spec.template.spec.containers[0];
    assert.ok(container, "job.yaml has a container");
    const { parallelism = 1, backoffLimitPerIndex = 0 } = job.spec;
    const remote = bareRemote();
    const bin = ralphOnPath();
    const files = tempDir("ralph-job-files-");
    const hook = await webhook();
    const tag = cleanup.tag();
    writeFileSync(join(files, "hang-armed"), "");
    const args = ["--tasks", "prd.json", "--prompt-file", "PROMPT.md", "-n", "4", "--grace", `${GRACE_MS / 1000}s`];
    const agent = [
      "--",
      "env",
      `${tag.key}=${tag.value}`,
      process.execPath,
      JOB_AGENT,
      "--dir",
      files,
      "--slow",
      "US-2",
    ];

    const startPod = (index: number, attempt: number): Pod => {
      const workspace = tempDir(`ralph-pod-${index}-${attempt}-`);
      const env = cleanEnv({
        PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`,
        RALPH_REMOTE: remote,
        RALPH_WORKSPACE: workspace,
        RALPH_WEBHOOK_URL: hook.url,
        JOB_COMPLETION_INDEX: String(index),
        GIT_AUTHOR_NAME: "ralph",
        GIT_AUTHOR_EMAIL: "ralph@example.test",
        GIT_COMMITTER_NAME: "ralph",
        GIT_COMMITTER_EMAIL: "ralph@example.test",
      });
      const started = cleanup.process(
        UNSHARE as string,
        ["--pid", "--fork", "--kill-child", "--mount-proc", "sh", POD_START, ...args, ...agent],
        { cwd: workspace, env },
      );
      return { index, attempt, workspace, started };
    };

    // The kubelet's part for index 1's first pod: SIGTERM to the container's PID 1 once its agent works on
    // iteration 2, after iteration 1's commit reached the remote.
    let terminated: { pod: Pod; sentAt: number; ralphWasInit: boolean } | null = null;
    const kubelet = async (pod: Pod): Promise<void> => {
      await waitForJson(join(files, "hang.json"), 30_000, pod.started);
      await waitFor(
        () =>
          spawnSync("git", ["--git-dir", remote, "rev-parse", "-q", "--verify", "refs/heads/ralph/US-2"]).status === 0,
        "ralph/US-2 on the remote",
        10_000,
      );
      const init = initPid(pod.started.child.pid as number);
      const ralphWasInit = isNamespaceInit(init) && readFileSync(`/proc/${init}/cmdline`, "utf8").includes(RALPH);
      terminated = { pod, sentAt: performance.now(), ralphWasInit };
      process.kill(init, "SIGTERM");
    };

    // The Job controller's part: indexes in order, `parallelism` pods at once, podFailurePolicy on each failure.
    const queue = STORIES.map((_, index) => ({ index, attempt: 0 }));
    const failures = new Map<number, number>();
    const ended: Ended[] = [];
    const active = new Map<Pod, Promise<Pod>>();
    const kubeletDone: Array<Promise<void>> = [];
    while (queue.length > 0 || active.size > 0) {
      while (queue.length > 0 && active.size < parallelism) {
        const next = queue.shift() as { index: number; attempt: number };
        const pod = startPod(next.index, next.attempt);
        if (pod.index === 1 && pod.attempt === 0) kubeletDone.push(kubelet(pod));
        active.set(
          pod,
          within(pod.started.done, 60_000, `pod ${pod.index}/${pod.attempt}`).then(() => pod),
        );
      }
      const pod = await Promise.race(active.values());
      active.delete(pod);
      const result = await pod.started.done;
      const action =
        result.code === 0
          ? "Succeeded"
          : podFailureAction(job, { container: container.name, exitCode: result.code ?? -1 });
      ended.push({ index: pod.index, attempt: pod.attempt, code: result.code, action, stderr: result.stderr });
      if (action === "Count" || action === "Ignore") {
        const count = (failures.get(pod.index) ?? 0) + (action === "Count" ? 1 : 0);
        failures.set(pod.index, count);
        if (count <= backoffLimitPerIndex) queue.push({ index: pod.index, attempt: pod.attempt + 1 });
      }
    }
    await Promise.all(kubeletDone);

    const summary = ended.map(({ index, attempt, code, action }) => `${index}/${attempt}: ${code} ${action}`).sort();
    assert.deepEqual(
      summary,
      ["0/0: 0 Succeeded", "1/0: 143 Count", "1/1: 0 Succeeded", "2/0: 0 Succeeded", "3/0: 0 Succeeded"],
      ended.map((pod) => pod.stderr).join("\n"),
    );

    // The terminated pod: ralph was PID 1, honoured the grace (the agent ignores SIGTERM), and exited in time.
    assert.ok(terminated, "the kubelet step ran");
    const { pod: first, sentAt, ralphWasInit } = terminated as { pod: Pod; sentAt: number; ralphWasInit: boolean };
    assert.equal(ralphWasInit, true, "ralph is PID 1 of the pod's namespace");
    const tookMs = (await first.started.done).exitedAt - sentAt;
    t.diagnostic(`pods: ${summary.join(", ")}; SIGTERM to exit ${Math.round(tookMs)} ms with --grace ${GRACE_MS} ms`);
    assert.ok(
      tookMs >= GRACE_MS - 100 && tookMs < GRACE_MS + 3000,
      `SIGTERM to exit: ${Math.round(tookMs)} ms (grace ${GRACE_MS} ms)`,
    );
    const graceSeconds = Number.parseInt(argValue(container.args ?? [], "--grace") ?? "", 10);
    const overheadS = (tookMs - GRACE_MS) / 1000;
    assert.ok(
      (job.spec.template.spec.terminationGracePeriodSeconds ?? 30) > graceSeconds + overheadS + 5,
      "job.yaml leaves ralph its --grace and the time to record and push",
    );
    const firstRun = join(first.workspace, "repo", ".ralph", "runs", "US-2");
    assert.deepEqual(
      [readStatus(firstRun).exit_reason, readStatus(firstRun).exit_code, readStatus(firstRun).iteration],
      ["INTERRUPTED", 143, 2],
    );
    assert.deepEqual(completionMarker(firstRun), ["completion_reason=INTERRUPTED", "promise=COMPLETE"]);
    // ralph ended the agent's tree itself, SIGKILL after the grace, before the namespace went away.
    const interrupted = readEvents(firstRun).find((event) => event.type === "iteration_ended" && event.iteration === 2);
    assert.deepEqual([interrupted?.ended_by, interrupted?.exit_signal], ["interrupted", "SIGKILL"]);
    assert.deepEqual(survivors(tag), [], "no agent process outlived its pod");

    // The remote: one branch per finished task, none for the task that was already done.
    const branches = git(remote, "for-each-ref", "--format=%(refname:short)", "refs/heads/ralph/").split("\n").sort();
    assert.deepEqual(branches, ["ralph/US-1", "ralph/US-2", "ralph/US-3"]);
    for (const id of ["US-1", "US-2", "US-3"]) {
      const prd = JSON.parse(git(remote, "show", `ralph/${id}:prd.json`)) as {
        userStories: Array<{ id: string; passes: boolean }>;
      };
      assert.deepEqual(
        prd.userStories
          .filter((story) => story.passes)
          .map((story) => story.id)
          .sort(),
        [id, "US-4"].sort(),
        `only ${id} is done on ralph/${id}`,
      );
    }
    // The replacement went on from the interrupted pod's branch: its first iteration's commit is still there.
    assert.deepEqual(git(remote, "log", "--format=%s", "main..ralph/US-2").split("\n"), [
      "ralph(US-2): iteration 1: US-2: two (two iterations; its first pod is ended mid-iteration)",
      "ralph(US-2): iteration 1: US-2: two (two iterations; its first pod is ended mid-iteration)",
    ]);
    assert.equal(git(remote, "show", "ralph/US-2:work/US-2.part1"), "started in iteration 1");
    assert.equal(git(remote, "show", "ralph/US-2:work/US-2.done"), "finished in iteration 1");

    // Events reached the webhook: every pod's ending, with its reason and exit code.
    const endings = hook.events
      .filter((event) => event.type === "run_ended")
      .map((event) => `${String(event.run)} ${String(event.reason)} ${String(event.exit_code)}`)
      .sort();
    assert.deepEqual(endings, ["US-1 DONE 0", "US-2 DONE 0", "US-2 INTERRUPTED 143", "US-3 DONE 0", "US-4 NO_WORK 0"]);

    // An index beyond the list (completions larger than the task count) is a usage error the policy fails for good.
    const beyond = startPod(STORIES.length, 0);
    const result = await within(beyond.started.done, 30_000, "the pod beyond the list");
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /^ralph: --task-index 4: expected 0 to 3, the positions of the 4 task\(s\) in prd\.json\n$/,
    );
    assert.equal(podFailureAction(job, { container: container.name, exitCode: 2 }), "FailIndex");
    assert.equal(existsSync(join(beyond.workspace, "repo", ".ralph")), false);
  });
});
