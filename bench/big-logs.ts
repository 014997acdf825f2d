// Big logs: `ralph logs RUN` and the dashboard's first screen of a run whose events.jsonl is 1 GB, against
// a Node script reading the file's last 64 KB; the dashboard's other requests are timed meanwhile.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeBigRun } from "../test/helpers/big-events.js";
import { builds, cleanEnv, scratchDir } from "./ralph-cli.js";
import { startUi } from "./ui.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples, sleep } from "./stats.js";

const MB = 1024;
/** `ralph logs` is followed this long, then ended: its memory has long levelled off by then. */
const LOGS_WINDOW_MS = 3000;
const TAIL_64K = `const fs=require("fs");const f=process.argv[1];const fd=fs.openSync(f,"r");const s=fs.fstatSync(fd).size;const b=Buffer.alloc(65536);fs.readSync(fd,b,0,b.length,Math.max(0,s-b.length));process.stdout.write(b.toString("utf8").split("\\n").slice(1).join("\\n"));`;

function peakKb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Spawn → first byte on stdout (ms; null: none within LOGS_WINDOW_MS), and the peak RSS (MB) over that window. */
function firstOutput(args: string[], cwd: string): Promise<{ firstMs: number | null; peakMb: number }> {
  return new Promise((resolve, reject) => {
    const started = nowMs();
    const child = spawn(process.execPath, args, { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "ignore"] });
    let first = -1;
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, peakKb(child.pid as number))), 10);
    const stop = setTimeout(() => child.kill("SIGTERM"), LOGS_WINDOW_MS);
    child.stdout.on("data", () => {
      if (first < 0) first = nowMs() - started;
    });
    child.once("error", reject);
    child.once("exit", () => {
      clearInterval(poll);
      clearTimeout(stop);
      resolve({ firstMs: first < 0 ? null : first, peakMb: peak / 1024 });
    });
  });
}

/** A build gets this long to show the first screen; one that does not is ended and noted. */
const UI_CAP_MS = 20_000;

/**
 * Opens the run's stream: request → snapshot (ms; null: none within UI_CAP_MS), the server's peak RSS, and
 * the slowest GET / meanwhile (a request not answered by the cap counts as the time waited).
 */
async function dashboard(
  main: string,
  project: string,
): Promise<{ snapshotMs: number | null; peakMb: number; otherMaxMs: number; quietMaxMs: number }> {
  const ui = await startUi(project, main);
  const exited = new Promise((resolve) => ui.child.once("exit", resolve));
  const url = new URL(ui.url);
  const cookie = `ralph_ui_${url.port}=${url.searchParams.get("token") ?? ""}`;
  const pid = ui.child.pid as number;
  let peak = peakKb(pid);
  const poll = setInterval(() => (peak = Math.max(peak, peakKb(pid))), 10);
  const stop = new AbortController();
  const capped = setTimeout(() => stop.abort(), UI_CAP_MS);
  try {
    // A viewer already has the runs page open: the server has answered it once.
    await (await fetch(`${url.origin}/`, { headers: { cookie } })).text();
    // The same requests for a second with no stream open: what this machine's load alone costs them.
    const quiet: number[] = [];
    for (const until = nowMs() + 1000; nowMs() < until; await sleep(10)) {
      const at = nowMs();
      await (await fetch(`${url.origin}/`, { headers: { cookie } })).text();
      quiet.push(nowMs() - at);
    }
    const others: number[] = [];
    let streaming = true;
    const pinger = (async () => {
      while (streaming) {
        const at = nowMs();
        try {
          await (await fetch(`${url.origin}/`, { headers: { cookie }, signal: stop.signal })).text();
        } catch {
          streaming = false;
        }
        others.push(nowMs() - at);
        await sleep(10);
      }
    })();
    const started = nowMs();
    let snapshotMs: number | null = null;
    try {
      const response = await fetch(`${url.origin}/api/run/0/big/stream`, { headers: { cookie }, signal: stop.signal });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      // The first screen, then a second more (the earlier events are read meanwhile).
      while (snapshotMs === null || nowMs() - started < snapshotMs + 1000) {
        const { value, done } = await reader.read();
        if (done) break;
        text = (text + Buffer.from(value).toString("utf8")).slice(-1_000_000);
        if (snapshotMs === null && /event: snapshot\ndata: .*\n\n/.test(text)) snapshotMs = nowMs() - started;
      }
      await reader.cancel().catch(() => undefined);
    } catch {
      // capped: no first screen within UI_CAP_MS
    }
    streaming = false;
    await pinger;
    return { snapshotMs, peakMb: peak / 1024, otherMaxMs: Math.max(...others), quietMaxMs: Math.max(...quiet) };
  } finally {
    clearTimeout(capped);
    clearInterval(poll);
    ui.child.kill("SIGKILL");
    await exited;
  }
}

/** Measures `runs` rounds over one 1 GB events.jsonl. */
export async function benchBigLogs(runs: number, log: (line: string) => void): Promise<Row[]> {
  const project = scratchDir("big-logs");
  const events = `${writeBigRun(project, "big", MB)}/events.jsonl`;
  log(`logs: ${MB} MB events.jsonl written`);
  const samples = new Samples();
  const silent = new Set<string>();
  const blind = new Set<string>();
  for (let round = 0; round < runs; round++) {
    const tail = await retryOnce("tail", () => firstOutput(["-e", TAIL_64K, events], project), log);
    samples.add("tail.first", tail.firstMs ?? Number.NaN);
    samples.add("tail.peak", tail.peakMb);
    for (const { label, main } of builds()) {
      const logs = await retryOnce(`logs${label}`, () => firstOutput([main, "logs", "big"], project), log);
      if (logs.firstMs === null) silent.add(label);
      else samples.add(`logs.first${label}`, logs.firstMs);
      samples.add(`logs.peak${label}`, logs.peakMb);
      const ui = await retryOnce(`ui${label}`, () => dashboard(main, project), log);
      if (ui.snapshotMs === null) blind.add(label);
      else samples.add(`ui.first${label}`, ui.snapshotMs);
      samples.add(`ui.peak${label}`, ui.peakMb);
      samples.add(`ui.other${label}`, ui.otherMaxMs);
      samples.add(`ui.quiet${label}`, ui.quietMaxMs);
      log(
        `logs${label} round ${round + 1}/${runs}: logs ${logs.firstMs?.toFixed(0) ?? "no output"} ms ${logs.peakMb.toFixed(0)} MB; ui ${ui.snapshotMs?.toFixed(0) ?? "no snapshot"} ms ${ui.peakMb.toFixed(0)} MB, others ≤ ${ui.otherMaxMs.toFixed(0)} ms`,
      );
    }
  }
  const group = `Big logs, ${MB} MB events.jsonl`;
  const rows: Row[] = [];
  const row = (key: string, figure: string, unit: string, baseline: string, limit: number, command: string): Row => {
    const value = samples.get(key);
    const base = samples.get(baseline);
    return {
      group,
      figure,
      unit,
      value,
      ...(base ? { baseline: { label: "node reading the last 64 KB", value: base } } : {}),
      target: `< ${limit} ${unit}`,
      met: value ? value.median < limit : null,
      command,
    };
  };
  for (const { label } of builds()) {
    rows.push(
      {
        ...row(
          `logs.first${label}`,
          `ralph logs RUN: first output${label}`,
          "ms",
          "tail.first",
          1000,
          "ralph logs <run>",
        ),
        ...(silent.has(label)
          ? {
              met: false,
              note: `no output within ${LOGS_WINDOW_MS / 1000} s in ${samples.get(`logs.first${label}`) ? "some" : "every"} round`,
            }
          : {}),
      },
      row(
        `logs.peak${label}`,
        `ralph logs RUN: peak RSS over its first ${LOGS_WINDOW_MS / 1000} s${label}`,
        "MB",
        "tail.peak",
        100,
        "ralph logs <run>",
      ),
      {
        ...row(
          `ui.first${label}`,
          `dashboard: run page's snapshot${label}`,
          "ms",
          "tail.first",
          1000,
          "ralph ui; GET /api/run/0/<run>/stream",
        ),
        ...(blind.has(label)
          ? {
              met: false,
              note: `no snapshot within ${UI_CAP_MS / 1000} s in ${samples.get(`ui.first${label}`) ? "some" : "every"} round`,
            }
          : {}),
      },
      row(
        `ui.peak${label}`,
        `dashboard: server's peak RSS${label}`,
        "MB",
        "tail.peak",
        100,
        "ralph ui; GET /api/run/0/<run>/stream",
      ),
      {
        ...row(
          `ui.other${label}`,
          `dashboard: slowest GET / meanwhile${label}`,
          "ms",
          "",
          50,
          "GET / every 10 ms while the run's stream opens",
        ),
        ...(samples.get(`ui.quiet${label}`)
          ? {
              baseline: {
                label: "slowest GET / for 1 s before, no stream open",
                value: samples.get(`ui.quiet${label}`) as NonNullable<ReturnType<Samples["get"]>>,
              },
            }
          : {}),
        note: "GET / every 10 ms from the stream's request to a second after its snapshot",
      },
    );
  }
  return rows;
}
