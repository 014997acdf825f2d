// `npm run bench`: runs every benchmark, prints one table and writes bench/results.json.
// usage: node dist/bench/run.js [--runs N] [--only stop,overhead,reaction,memory,events,scale,ui,notify,startup,logs,parallel,sandbox,tui] [--markdown]
//        node dist/bench/run.js --render bench/results.json   (the Markdown table of an earlier run, for the README)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { benchBigLogs } from "./big-logs.js";
import { benchEventSize } from "./event-size.js";
import { benchLoopOverhead } from "./loop-overhead.js";
import { benchMemory } from "./memory.js";
import { benchNotify } from "./notify.js";
import { killStarted, RALPH, removeScratch } from "./ralph-cli.js";
import { benchParallelMemory } from "./parallel-memory.js";
import { benchReaction } from "./reaction.js";
import { describeMachine, markdownTable, textTable, type Results, type Row } from "./report.js";
import { benchSandbox } from "./sandbox.js";
import { benchScale } from "./scale.js";
import { benchStartup } from "./startup.js";
import { benchStopLatency } from "./stop-latency.js";
import { benchTui } from "./tui.js";
import { benchUi } from "./ui.js";
import { killTrees } from "./tree.js";

const SUITES: Record<string, (runs: number, log: (line: string) => void) => Promise<Row[]>> = {
  stop: benchStopLatency,
  overhead: benchLoopOverhead,
  reaction: benchReaction,
  memory: benchMemory,
  events: benchEventSize,
  scale: benchScale,
  ui: benchUi,
  notify: benchNotify,
  startup: benchStartup,
  logs: benchBigLogs,
  parallel: benchParallelMemory,
  sandbox: benchSandbox,
  tui: benchTui,
};

function parseArgs(argv: string[]): { runs: number; only: string[]; markdown: boolean } {
  let runs = 5;
  let only = Object.keys(SUITES);
  let markdown = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--runs") runs = Number(argv[++i]);
    else if (arg === "--only") only = (argv[++i] ?? "").split(",").filter(Boolean);
    else if (arg === "--markdown") markdown = true;
    else
      throw new Error(
        `unknown argument ${String(arg)} (usage: run.js [--runs N] [--only ${Object.keys(SUITES).join(",")}] [--markdown])`,
      );
  }
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs needs a whole number of at least 1");
  const unknown = only.filter((name) => !(name in SUITES));
  if (unknown.length > 0 || only.length === 0) throw new Error(`--only takes some of ${Object.keys(SUITES).join(",")}`);
  return { runs, only, markdown };
}

function header(results: Results): string {
  const machine = results.machine;
  return [
    `ralph benchmarks, ${results.date.slice(0, 10)}, ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}, Node ${machine.node}`,
    `each figure: median of ${results.runs} runs (min–max); total ${results.durationSeconds} s`,
  ].join("\n");
}

async function main(): Promise<number> {
  if (process.argv[2] === "--render") {
    const results = JSON.parse(readFileSync(process.argv[3] ?? "bench/results.json", "utf8")) as Results;
    process.stdout.write(`${header(results)}\n\n${markdownTable(results.rows)}`);
    return 0;
  }
  const { runs, only, markdown } = parseArgs(process.argv.slice(2));
  if (process.platform !== "linux")
    process.stderr.write("bench: written for Linux (/proc); other platforms will fail\n");
  if (!existsSync(RALPH)) throw new Error(`${RALPH} is missing: run npm run build first`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = performance.now();
  const rows: Row[] = [];
  let failed = false;
  // A Ctrl-C must not leave trees or temp directories behind.
  const abort = () => {
    killStarted();
    killTrees();
    removeScratch();
    process.exit(130);
  };
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  try {
    for (const name of only) {
      log(`== ${name}`);
      try {
        rows.push(...(await (SUITES[name] as (typeof SUITES)[string])(runs, log)));
      } catch (error) {
        // One broken suite must not throw away the others' minutes of samples.
        log(`${name}: FAILED: ${(error as Error).stack ?? String(error)}`);
        rows.push({
          group: name,
          figure: "suite failed",
          unit: "",
          value: null,
          met: false,
          note: (error as Error).message.split("\n")[0] ?? "",
          command: `node dist/bench/run.js --only ${name}`,
        });
        failed = true;
      }
    }
  } finally {
    killStarted();
    killTrees();
    removeScratch();
  }
  const results: Results = {
    date: new Date().toISOString(),
    machine: describeMachine(),
    runs,
    durationSeconds: Math.round((performance.now() - started) / 1000),
    rows,
  };
  writeFileSync(
    fileURLToPath(new URL("../../bench/results.json", import.meta.url)),
    `${JSON.stringify(results, null, 2)}\n`,
  );
  process.stdout.write(`${header(results)}; written to bench/results.json\n\n`);
  process.stdout.write(markdown ? markdownTable(rows) : textTable(rows));
  const missed = rows.filter((row) => row.met === false);
  process.stdout.write(
    missed.length === 0
      ? "\nevery target met\n"
      : `\n${missed.length} target(s) missed: ${missed.map((row) => `${row.group}: ${row.figure}`).join("; ")}\n`,
  );
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    killStarted();
    removeScratch();
    process.exitCode = 1;
  },
);
