// Start-up: `ralph --version`, `ralph status` and `ralph hook handle` (no loop active) against `node -e 0`,
// interleaved round by round; with BENCH_BEFORE=<another build's entry, dist/src/cli/main.cjs or main.js>, that build too.
import { spawn } from "node:child_process";
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builds, cleanEnv, cpuReporter, RALPH, scratchDir } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples } from "./stats.js";

const RATIO = 1.15;
/** What Claude Code sends the Stop hook (a project without a loop file: nothing to decide). */
const HOOK_INPUT = `${JSON.stringify({ session_id: "bench", transcript_path: "/nonexistent", cwd: "", hook_event_name: "Stop", stop_hook_active: false })}\n`;

/** Runs `node args` with `input` on stdin to its end; the wall time from spawn to exit (ms). */
function timed(args: string[], cwd: string, input: string, env: NodeJS.ProcessEnv = cleanEnv()): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(nowMs() - started) : reject(new Error(`node ${args.join(" ")}: exit ${code}: ${stderr}`)),
    );
    child.stdin.end(input);
  });
}

/** Measures each start-up `runs` × 3 times (they are short and noisy), interleaved with the baseline. */
export async function benchStartup(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("startup");
  const cpuFile = join(project, "cpu");
  const preload = cpuReporter(project);
  execFileSync("git", ["init", "-q", project]);
  const hookInput = HOOK_INPUT.replace('"cwd":""', `"cwd":${JSON.stringify(project)}`);
  writeFileSync(join(project, "hook-input.json"), hookInput);
  // One ended run for `status` to show.
  // (exit 3: MAX_ITERATIONS, as asked)
  spawnSync(process.execPath, [RALPH, "run", "-n", "1", "--name", "done", "x", "--", "true"], {
    cwd: project,
    env: cleanEnv(),
    stdio: "ignore",
  });
  const probes: Array<{ key: string; figure: string; args: string[]; input: string }> = [
    { key: "node", figure: "node -e 0", args: ["-e", "0"], input: "" },
  ];
  for (const { label, main } of builds()) {
    probes.push(
      { key: `version${label}`, figure: `ralph --version${label}`, args: [main, "--version"], input: "" },
      { key: `status${label}`, figure: `ralph status${label}`, args: [main, "status"], input: "" },
      {
        key: `hook${label}`,
        figure: `ralph hook handle, no loop active${label}`,
        args: [main, "hook", "handle"],
        input: hookInput,
      },
    );
  }
  const samples = new Samples();
  for (let round = 0; round < runs * 3; round++) {
    for (const probe of probes) {
      samples.add(probe.key, await retryOnce(probe.figure, () => timed(probe.args, project, probe.input), log));
      // The same call again for its CPU time, which the machine's load barely moves.
      await retryOnce(
        probe.figure,
        () => timed([...preload, ...probe.args], project, probe.input, cleanEnv({ BENCH_CPU_FILE: cpuFile })),
        log,
      );
      samples.add(`${probe.key}.cpu`, Number(readFileSync(cpuFile, "utf8")) / 1000);
    }
  }
  log("startup: done");
  const rows = (suffix: string, group: string, note: string): Row[] => {
    const bare = samples.get(`node${suffix}`);
    return probes
      .filter((probe) => probe.key !== "node")
      .map((probe) => {
        const value = samples.get(`${probe.key}${suffix}`);
        return {
          group,
          figure: probe.figure,
          ...(note ? { note } : {}),
          unit: "ms",
          value,
          ...(bare ? { baseline: { label: "node -e 0", value: bare } } : {}),
          target: `≤ ${RATIO}× node -e 0`,
          met: value && bare ? value.median <= bare.median * RATIO : null,
          command: `ralph ${probe.args.slice(1).join(" ")}${probe.input ? " < <Stop hook JSON>" : ""}`,
        };
      });
  };
  return [
    ...rows("", "Start-up (spawn to exit)", ""),
    ...rows(
      ".cpu",
      "Start-up (CPU time, user + system)",
      "both sides preloaded with the CPU-time reporter (node --require)",
    ),
  ];
}
