// Starting and ending agents under each supervision mode: start failures keep their meaning, output is
// never lost, a cgroup's figures come back, and each polite signal reaches each member once.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cgroupMounts } from "../../src/process/cgroup-fs.js";
import { readProcess } from "../../src/process/proc-table.js";
import { Supervision } from "../../src/process/supervision.js";
import type { AgentProcess } from "../../src/process/spawn-agent.js";
import { fileChanges, waitFor, within } from "../helpers/wait.js";

const NO_CAPS = { memoryMaxBytes: null, pidsMax: null };

async function choose(mode: string): Promise<Supervision | string> {
  return Supervision.choose({
    env: { ...process.env, RALPH_SUPERVISION: mode },
    pid: process.pid,
    pidStart: readProcess(process.pid)?.startTime ?? null,
    caps: NO_CAPS,
  });
}

function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    stream.on("end", () => resolve(text));
  });
}

const ENDING = { graceMs: 1000, politeSignals: ["SIGTERM"] as NodeJS.Signals[] };

for (const mode of ["cgroup", "subreaper"]) {
  describe(`${mode} supervision: starting agents`, async () => {
    const chosen = process.platform === "linux" ? await choose(mode) : "Linux only";
    const skip = typeof chosen === "string" ? chosen : false;
    const supervision = chosen as Supervision;
    const options = {
      cwd: "/",
      env: { ...process.env, RALPH_ITERATION: "1", RALPH_RUN_ID: "unit" },
      marker: { key: "RALPH_SUPERVISOR", value: `unit-${process.pid}` },
    };

    it(
      "a missing program is not_found and a directory is not_executable, as without a launcher",
      { skip },
      async () => {
        const missing = await supervision.spawn({ ...options, argv: ["/nonexistent/agent"], stdin: null });
        assert.deepEqual(missing.ok ? "started" : missing.error, "not_found");
        const directory = await supervision.spawn({ ...options, argv: ["/tmp"], stdin: null });
        assert.deepEqual(directory.ok ? "started" : directory.error, "not_executable");
      },
    );

    it("every line of an agent that prints and exits at once arrives, with its exit code", { skip }, async () => {
      for (let round = 0; round < 20; round++) {
        const started = await supervision.spawn({
          ...options,
          argv: ["sh", "-c", "cat; echo out; echo err >&2; exit 7"],
          stdin: "in\n",
        });
        assert.ok(started.ok);
        const agent: AgentProcess = started.agent;
        const [out, err, exit] = await Promise.all([collect(agent.stdout), collect(agent.stderr), agent.exited]);
        await agent.end(ENDING);
        assert.deepEqual([out, err, exit.code], ["in\nout\n", "err\n", 7], `round ${round}`);
      }
    });

    it(
      mode === "cgroup"
        ? "the cgroup's CPU time and process count come back after the end"
        : "no figures without a cgroup",
      { skip },
      async () => {
        const started = await supervision.spawn({
          ...options,
          argv: ["sh", "-c", "sleep 1 & sleep 1 & wait"],
          stdin: null,
        });
        assert.ok(started.ok);
        await started.agent.exited;
        await started.agent.end(ENDING);
        const figures = started.agent.resources();
        if (mode === "cgroup") {
          assert.equal(typeof figures?.cpu_seconds, "number");
          assert.ok((figures?.peak_pids ?? 0) >= 3, JSON.stringify(figures));
        } else assert.equal(figures, null);
      },
    );

    it(
      mode === "cgroup"
        ? "the process count is the agent's alone: not the runner's threads that forked it (`true` is one process)"
        : "no process count without a cgroup",
      { skip },
      async () => {
        const started = await supervision.spawn({ ...options, argv: ["true"], stdin: null });
        assert.ok(started.ok);
        await started.agent.exited;
        await started.agent.end(ENDING);
        const figures = started.agent.resources();
        if (mode === "cgroup")
          assert.ok((figures?.peak_pids ?? 0) >= 1 && (figures?.peak_pids ?? 0) <= 2, JSON.stringify(figures));
        else assert.equal(figures, null);
      },
    );

    it(
      mode === "cgroup"
        ? "the process count counts processes, not threads: sh with two multi-threaded node children is 3"
        : "no process count without a cgroup",
      { skip },
      async () => {
        // Each node child runs several threads (libuv's pool, V8's workers); the kernel's pids figures count each one.
        const child = `${JSON.stringify(process.execPath)} -e 'console.log("up"); setInterval(() => {}, 1000)'`;
        const started = await supervision.spawn({
          ...options,
          argv: ["sh", "-c", `${child} & ${child} & wait`],
          stdin: null,
        });
        assert.ok(started.ok);
        let out = "";
        started.agent.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")));
        await waitFor(() => (out.match(/up/g) ?? []).length >= 2, "both node children to print up", 10_000);
        assert.equal((out.match(/up/g) ?? []).length, 2, "both node children are running");
        // end() takes a last sample while all three processes are still there, then ends them.
        const report = await started.agent.end(ENDING);
        assert.equal(report.survivors, 0);
        const figures = started.agent.resources();
        if (mode === "cgroup") assert.equal(figures?.peak_pids, 3, JSON.stringify(figures));
        else assert.equal(figures, null);
      },
    );

    it(
      "ending a running tree: each polite signal reaches each member once, in the root's group or in its own session",
      { skip },
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "ralph-polite-"));
        const log = join(dir, "log");
        // Background jobs of a non-interactive shell ignore SIGINT (and cannot trap it): HUP stands in for it.
        const member = (name: string) =>
          `trap 'echo ${name} HUP >> "$0"' HUP; trap 'echo ${name} TERM >> "$0"' TERM; echo ready >> "$0"; while :; do sleep 0.05; done`;
        const script = `(${member("group")}) & setsid sh -c '${member("session").replace(/'/g, `'"'"'`)}' "$0" & wait`;
        try {
          const started = await supervision.spawn({ ...options, argv: ["sh", "-c", script, log], stdin: null });
          assert.ok(started.ok);
          const lines = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
          await waitFor(
            () => lines().filter((line) => line === "ready").length >= 2,
            "both members to trap their signals",
            5000,
            fileChanges(log),
          );
          const report = await started.agent.end({
            graceMs: 800,
            politeSignals: ["SIGHUP", "SIGTERM"],
            politeGapMs: 200,
          });
          assert.equal(report.survivors, 0);
          assert.deepEqual(
            lines()
              .filter((line) => line !== "ready")
              .sort(),
            ["group HUP", "group TERM", "session HUP", "session TERM"],
          );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    );

    it("ending a tree that leaves on TERM returns when it has left, not at the next re-read", { skip }, async () => {
      const started = await supervision.spawn({
        ...options,
        argv: ["sh", "-c", "sleep 30 & sleep 30 & echo up; wait"],
        stdin: null,
      });
      assert.ok(started.ok);
      await new Promise((resolve) => started.agent.stdout.once("data", resolve));
      // Re-reads 60 s apart: only the kernel's word (cgroup.events, the subreaper's exit) can end the wait in time.
      const skipGrace = new AbortController();
      const ending = started.agent.end({
        graceMs: 120_000,
        politeSignals: ["SIGTERM"],
        pollMs: 60_000,
        skipGrace: skipGrace.signal,
      });
      const report = await within(ending, 10_000, "the end of the tree before the next re-read").catch(
        async (error: unknown) => {
          skipGrace.abort();
          await ending;
          throw error;
        },
      );
      assert.equal(report.survivors, 0);
    });

    it(
      "an agent's cgroup is removed with the cgroups the agent made inside it",
      { skip: mode === "cgroup" ? skip : "cgroup only" },
      async () => {
        const v2 = cgroupMounts().find((mount) => mount.version === 2);
        assert.ok(v2, "a cgroup v2 mount");
        // The agent finds its own cgroup and makes two levels under it.
        const script = `d="$0$(sed -n 's/^0:://p' /proc/self/cgroup)"; mkdir -p "$d/made/deeper" && echo "$d"`;
        const started = await supervision.spawn({ ...options, argv: ["sh", "-c", script, v2.mountPoint], stdin: null });
        assert.ok(started.ok);
        const [out, exit] = await Promise.all([collect(started.agent.stdout), started.agent.exited]);
        assert.equal(exit.code, 0);
        const dir = out.trim();
        assert.ok(existsSync(join(dir, "made", "deeper")), dir);
        await started.agent.end(ENDING);
        assert.equal(existsSync(dir), false, `${dir} is left`);
      },
    );

    it("disposes the runner's cgroup", { skip }, () => supervision.dispose());
  });
}
