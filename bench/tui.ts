// `ralph tui` while 8 loops stream output: the CPU the TUI itself uses (user + system, from /proc), in its
// runs view and in the run view of one streaming run, as a share of one core. Its frames are capped at 10 Hz.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTui } from "../test/helpers/tui-terminal.js";
import { cleanEnv, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { Samples, sleep } from "./stats.js";

const LOOPS = 8;
const WINDOW_MS = 10_000;
const TARGET_PERCENT = 5;
/** An agent that prints a line every 20 ms for 3 s, each iteration. */
const STREAMER = `let n = 0; const t = setInterval(() => { console.log("line " + ++n + " of the agent's output, long enough to be a realistic line of text"); if (n === 150) { clearInterval(t); } }, 20);`;

/** The CPU time (ms) a process has used so far, from /proc/PID/stat (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The TUI's CPU over WINDOW_MS, in % of one core. */
async function cpuPercent(pid: number): Promise<number> {
  const before = cpuMs(pid);
  await sleep(WINDOW_MS);
  return ((cpuMs(pid) - before) / WINDOW_MS) * 100;
}

function state(dir: string, id: string): string {
  try {
    return String((JSON.parse(readFileSync(join(runDir(dir, id), "status.json"), "utf8")) as { state?: string }).state);
  } catch {
    return "";
  }
}

/** Starts LOOPS streaming runs, measures the TUI in both views `runs` times, and stops the runs. */
export async function benchTui(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("tui");
  const agent = join(project, "..", `${project.split("/").pop()}-streamer.cjs`);
  writeFileSync(agent, STREAMER);
  const ids = Array.from({ length: LOOPS }, (_, index) => `loop-${index + 1}`);
  const loops = ids.map((id) =>
    startRalph(["run", "--name", id, "-n", "1000", "stream", "--", process.execPath, agent], project),
  );
  const samples = new Samples();
  try {
    const deadline = Date.now() + 60_000;
    while (!ids.every((id) => state(project, id) === "running")) {
      if (Date.now() > deadline) throw new Error("tui: the 8 loops did not all start in 60 s");
      await sleep(100);
    }
    log(`tui: ${LOOPS} loops streaming`);
    for (let round = 0; round < runs; round++) {
      const tui = startTui(project, [], 120, 40, cleanEnv());
      try {
        await tui.waitFor((screen) => ids.every((id) => screen.includes(id)), "the 8 loops listed", 30_000);
        samples.add("runs", await cpuPercent(tui.pty.pid));
        tui.type("\r");
        await tui.waitFor((screen) => screen.includes("── agent output"), "the run view", 30_000);
        samples.add("run", await cpuPercent(tui.pty.pid));
        log(
          `tui: round ${round + 1}: runs view ${samples.get("runs")?.samples.at(-1)?.toFixed(2)}%, run view ${samples.get("run")?.samples.at(-1)?.toFixed(2)}%`,
        );
      } finally {
        tui.type("q");
        await Promise.race([tui.exited, sleep(5000)]);
        if (tui.running()) tui.pty.kill("SIGKILL");
      }
    }
  } finally {
    for (const loop of loops) loop.child.kill("SIGTERM");
    await Promise.all(loops.map((loop) => Promise.race([loop.exited, sleep(30_000)])));
  }
  const row = (key: string, figure: string): Row => {
    const value = samples.get(key);
    return {
      group: "Terminal UI (8 loops streaming)",
      figure,
      unit: "% of a core",
      value,
      target: `< ${TARGET_PERCENT}%`,
      met: value ? value.median < TARGET_PERCENT : null,
      note: `each loop's agent prints a line every 20 ms; CPU of the TUI process over ${WINDOW_MS / 1000} s; frames capped at 10 Hz`,
      command: "ralph tui",
    };
  };
  return [row("runs", "TUI CPU, runs view"), row("run", "TUI CPU, run view of a streaming run")];
}
