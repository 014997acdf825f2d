// Scale: `ralph list` and `ralph status` over 10,000 run directories, and the start-up time of `ralph --version`.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fixture, runDir, scratchDir, startRalph, timeProcess, RALPH } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { retryOnce, Samples } from "./stats.js";

const RUNS = 10_000;
const LIST_TARGET_MS = 1000;
const VERSION_TARGET_MS = 150;
const FILES = ["status.json", "progress.txt", "events.jsonl", "state.md"];

/** Fills `project` with `count` copies of one real run, ids spread over 30 days; 1 in 100 looks like a dead runner's. */
export async function populate(project: string, count = RUNS): Promise<string[]> {
  const template = "template";
  const exit = await startRalph(["run", "--name", template, "-n", "1", "scale", "--", "true"], project).exited;
  if (exit.code !== 3) throw new Error(`scale: template run exit ${exit.code ?? exit.signal}`);
  const source = runDir(project, template);
  const contents = FILES.map((name) => readFileSync(join(source, name), "utf8"));
  rmSync(source, { recursive: true, force: true });
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const start = Date.UTC(2026, 0, 1);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const at = new Date(start + i * 259_000);
    const id = `${at.getUTCFullYear()}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}-${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${pad(at.getUTCSeconds())}-${pad(i % 65536, 4)}`;
    const dir = runDir(project, id);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stale = i % 100 === 99;
    FILES.forEach((name, index) => {
      let text = (contents[index] as string).replaceAll(template, id);
      if (stale && name === "progress.txt") text = text.replace(/completion_reason=.*\npromise=COMPLETE\n$/, "");
      if (stale && name === "status.json") text = text.replace(/"state": "ended"/, '"state": "running"').replace(/"pid": \d+/, '"pid": 4194304');
      writeFileSync(join(dir, name), text, { mode: 0o600 });
    });
    ids.push(id);
  }
  return ids;
}

/** Times each command `runs` times (interleaved, so a slow moment hits them all alike). */
export async function benchScale(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("scale");
  const ids = await populate(project);
  log(`scale: ${ids.length} runs written`);
  const node = process.execPath;
  const probes: Array<[string, string[], number]> = [
    ["list.json", [RALPH, "list", "--json"], 0],
    ["list", [RALPH, "list"], 0],
    ["status.auto", [RALPH, "status", "--json"], 0],
    ["status.id", [RALPH, "status", "--json", ids[ids.length - 1] as string], 0],
    ["floor.read", [fixture("read-runs"), project], 0],
    ["version", [RALPH, "--version"], 0],
    ["floor.node", ["-e", "0"], 0],
  ];
  const samples = new Samples();
  // Start-up figures are short and noisy: twice the samples.
  for (let round = 0; round < runs * 2; round++) {
    for (const [name, args, code] of probes) {
      if (round >= runs && !name.startsWith("version") && !name.startsWith("floor.node")) continue;
      samples.add(name, await retryOnce(name, () => timeProcess(node, args, project, undefined, code), log));
    }
  }
  log(`scale: done`);
  const group = `Scale, ${RUNS.toLocaleString("en-US")} run directories`;
  const read = samples.get("floor.read");
  const bare = samples.get("floor.node");
  const version = samples.get("version");
  const withBaseline = (name: string, figure: string, command: string, label: string, baseline: ReturnType<Samples["get"]>, target?: number): Row => {
    const value = samples.get(name);
    return {
      group,
      figure,
      unit: "ms",
      value,
      ...(baseline ? { baseline: { label, value: baseline } } : {}),
      ...(target !== undefined ? { target: `< ${target} ms`, met: value ? value.median < target : null } : {}),
      command,
    };
  };
  return [
    withBaseline("list.json", "ralph list --json", "ralph list --json", "node reading the same files", read, LIST_TARGET_MS),
    withBaseline("list", "ralph list (table)", "ralph list", "node reading the same files", read, LIST_TARGET_MS),
    withBaseline("status.auto", "ralph status --json (no RUN: finds the latest)", "ralph status --json", "node reading the same files", read),
    withBaseline("status.id", "ralph status --json RUN", "ralph status --json <id>", "ralph --version", version),
    { ...withBaseline("version", "ralph --version (start-up)", "ralph --version", "node -e 0", bare, VERSION_TARGET_MS), group: "Start-up" },
  ];
}
