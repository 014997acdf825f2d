// Scale: `ralph list` and `ralph status` over 10,000 run directories, and the start-up time of `ralph --version`.
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  builds,
  cleanEnv,
  cpuReporter,
  fixture,
  runDir,
  scratchDir,
  startRalph,
  timeProcess,
  RALPH,
} from "./ralph-cli.js";
import type { Row } from "./report.js";
import { retryOnce, Samples } from "./stats.js";

const RUNS = 10_000;
const LIST_TARGET_MS = 1000;
const VERSION_TARGET_MS = 150;
const FILES = ["status.json", "progress.txt", "events.jsonl", "state.md"];

/**
 * Fills `project` with `count` copies of one real run, ids spread over 30 days; 1 in 100 looks like a dead
 * runner's. With `stateHome` (an XDG_STATE_HOME of the benchmark's own), each copy also gets what ralph
 * keeps of a run there: the runner's record (without it, each run is foreign) and, in the spend ledger, the
 * run's record and its one call, as a run ralph made has.
 */
export async function populate(project: string, count = RUNS, stateHome: string | null = null): Promise<string[]> {
  const template = "template";
  const env = stateHome === null ? cleanEnv() : cleanEnv({ XDG_STATE_HOME: stateHome });
  const exit = await startRalph(["run", "--name", template, "-n", "1", "scale", "--", "true"], project, { env }).exited;
  if (exit.code !== 3) throw new Error(`scale: template run exit ${exit.code ?? exit.signal}`);
  const source = runDir(project, template);
  const contents = FILES.map((name) => readFileSync(join(source, name), "utf8"));
  rmSync(source, { recursive: true, force: true });
  const records = stateHome === null ? null : join(stateHome, "ralph", "runs");
  const record =
    records === null
      ? null
      : (JSON.parse(readFileSync(join(records, readdirSync(records)[0] as string), "utf8")) as Record<string, unknown>);
  if (records !== null) rmSync(records, { recursive: true, force: true });
  if (records !== null) mkdirSync(records, { recursive: true, mode: 0o700 });
  const spend = stateHome === null ? null : templateSpend(join(stateHome, "ralph", "spend"), template);
  const runsDir = realpathSync(join(project, ".ralph", "runs"));
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
      if (stale && name === "status.json")
        text = text.replace(/"state": "ended"/, '"state": "running"').replace(/"pid": \d+/, '"pid": 4194304');
      writeFileSync(join(dir, name), text, { mode: 0o600 });
    });
    if (records !== null && record !== null) {
      const canonicalDir = join(runsDir, id);
      const file = `${createHash("sha256").update(canonicalDir).digest("hex").slice(0, 40)}.json`;
      writeFileSync(
        join(records, file),
        `${JSON.stringify({ ...record, run_id: id, run_dir: canonicalDir, status_sha256: null })}\n`,
        { mode: 0o600 },
      );
    }
    spend?.add(id);
    ids.push(id);
  }
  spend?.write();
  return ids;
}

/**
 * The spend ledger's records of the template run, to copy: `add(id)` makes run `id`'s record (named as the
 * ledger names it) and its calls; `write` appends every copy's calls to the template's day files.
 */
function templateSpend(dir: string, template: string): { add: (id: string) => void; write: () => void } {
  const runs = join(dir, "runs");
  const days = join(dir, "days");
  const [runFile] = readdirSync(runs);
  const run = JSON.parse(readFileSync(join(runs, runFile as string), "utf8")) as {
    project: string;
    run: string;
    family: string;
  };
  if (run.run !== template) throw new Error(`scale: the spend ledger's run is ${run.run}, not ${template}`);
  rmSync(join(runs, runFile as string));
  const calls = readdirSync(days).map((name) => ({
    name,
    lines: readFileSync(join(days, name), "utf8")
      .split("\n")
      .filter((line) => line.includes(`"run":"${template}"`)),
  }));
  const appended = new Map<string, string[]>();
  return {
    add(id) {
      const name = `${createHash("sha256").update(`${run.project}\0${id}`).digest("hex").slice(0, 40)}.json`;
      writeFileSync(join(runs, name), `${JSON.stringify({ ...run, run: id, family: id })}\n`, { mode: 0o600 });
      for (const { name: day, lines } of calls) {
        const list = appended.get(day) ?? [];
        for (const line of lines) list.push(line.replaceAll(`"${template}"`, `"${id}"`));
        appended.set(day, list);
      }
    },
    write() {
      for (const [day, lines] of appended)
        if (lines.length > 0) appendFileSync(join(days, day), `${lines.join("\n")}\n`);
    },
  };
}

/**
 * Times each command `runs` times (interleaved, so a slow moment hits them all alike). The listings, and node
 * reading the same files, are also measured for their CPU time (user + system, from a preloaded reporter, in
 * the same process), which the machine's load moves far less than the wall time. With BENCH_BEFORE, the
 * listings of that build run in the same rounds (the two builds' order swapped each round), and each of this
 * build's listing figures shows that build's beside it.
 */
export async function benchScale(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("scale");
  const stateHome = scratchDir("scale-state");
  const cpuFile = join(stateHome, "cpu");
  const preload = cpuReporter(stateHome);
  const env = cleanEnv({ XDG_STATE_HOME: stateHome, BENCH_CPU_FILE: cpuFile });
  const ids = await populate(project, RUNS, stateHome);
  log(`scale: ${ids.length} runs written, each with its runner's record and its spend ledger records`);
  const node = process.execPath;
  type Probe = { name: string; args: string[]; cpu: boolean };
  const listings = (order: ReturnType<typeof builds>): Probe[] =>
    order.flatMap(({ label, main }) => [
      { name: `list.json${label}`, args: [main, "list", "--json"], cpu: true },
      { name: `list${label}`, args: [main, "list"], cpu: true },
    ]);
  const others: Probe[] = [
    { name: "status.auto", args: [RALPH, "status", "--json"], cpu: false },
    { name: "status.id", args: [RALPH, "status", "--json", ids[ids.length - 1] as string], cpu: false },
    { name: "floor.read", args: [fixture("read-runs"), project], cpu: true },
    { name: "version", args: [RALPH, "--version"], cpu: false },
    { name: "floor.node", args: ["-e", "0"], cpu: false },
  ];
  const samples = new Samples();
  // Start-up figures are short and noisy: twice the samples.
  for (let round = 0; round < runs * 2; round++) {
    // The two builds' listings in the other order each round: neither always follows the other.
    for (const { name, args, cpu } of [...listings(round % 2 === 0 ? builds() : builds().reverse()), ...others]) {
      if (round >= runs && !name.startsWith("version") && !name.startsWith("floor.node")) continue;
      samples.add(
        name,
        await retryOnce(name, () => timeProcess(node, cpu ? [...preload, ...args] : args, project, env, 0), log),
      );
      if (cpu) samples.add(`${name}.cpu`, Number(readFileSync(cpuFile, "utf8")) / 1000);
    }
  }
  log(`scale: done`);
  const group = `Scale, ${RUNS.toLocaleString("en-US")} run directories (spawn to exit)`;
  const cpuGroup = `Scale, ${RUNS.toLocaleString("en-US")} run directories (CPU time, user + system)`;
  const read = samples.get("floor.read");
  const bare = samples.get("floor.node");
  const version = samples.get("version");
  const withBaseline = (
    name: string,
    figure: string,
    command: string,
    label: string,
    baseline: ReturnType<Samples["get"]>,
    target?: number,
  ): Row => {
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
  // This build's listing beside the earlier build's when there is one, else beside node reading the same files.
  const before = builds().find(({ label }) => label !== "")?.label;
  const listRow = (key: string, figure: string, command: string, label: string, suffix: string): Row => {
    const earlier = before === undefined || label !== "" ? null : samples.get(`${key}${before}${suffix}`);
    const row = earlier
      ? {
          ...withBaseline(
            `${key}${label}${suffix}`,
            `${figure}${label}`,
            command,
            "the build before",
            earlier,
            LIST_TARGET_MS,
          ),
        }
      : withBaseline(
          `${key}${label}${suffix}`,
          `${figure}${label}`,
          command,
          "node reading the same files",
          suffix === "" ? read : samples.get("floor.read.cpu"),
          LIST_TARGET_MS,
        );
    return suffix === ""
      ? row
      : {
          ...row,
          group: cpuGroup,
          note: "the same processes as the wall figures, preloaded with the CPU-time reporter (node --require)",
        };
  };
  const listRows = (suffix: string): Row[] =>
    builds().flatMap(({ label }) => [
      listRow("list.json", "ralph list --json", "ralph list --json", label, suffix),
      listRow("list", "ralph list (table)", "ralph list", label, suffix),
    ]);
  return [
    ...listRows(""),
    withBaseline(
      "status.auto",
      "ralph status --json (no RUN: finds the latest)",
      "ralph status --json",
      "node reading the same files",
      read,
    ),
    withBaseline("status.id", "ralph status --json RUN", "ralph status --json <id>", "ralph --version", version),
    ...listRows(".cpu"),
    {
      ...withBaseline("version", "ralph --version (start-up)", "ralph --version", "node -e 0", bare, VERSION_TARGET_MS),
      group: "Start-up",
    },
  ];
}
