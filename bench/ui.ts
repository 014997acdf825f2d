// The dashboard in chromium: first paint of the runs table with 10,000 runs, and the time from an append to
// events.jsonl to the line in the page's DOM.
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, watch } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { CHROMIUM, openBrowser } from "../test/helpers/chromium.js";
import { cleanEnv, RALPH, runDir, scratchDir } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { populate } from "./scale.js";
import { Samples, wallMs } from "./stats.js";

const RUNS = 10_000;
const FEW = 10;
const APPENDS = 10;
const PAINT_TARGET_MS = 500;
const APPEND_TARGET_MS = 250;

/** `ralph ui` (of build `main`) on `project`; resolves with its URL once printed (and how long that took). */
export async function startUi(
  project: string,
  main = RALPH,
): Promise<{ child: ChildProcess; url: string; startMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [main, "ui", "--project", project], {
    cwd: project,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    setTimeout(() => reject(new Error(`ralph ui printed no URL in 60 s: ${out}`)), 60_000).unref();
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const found = /^(http:\/\/\S+)$/m.exec(out)?.[1];
      if (found) resolve(found);
    });
    child.once("exit", (code) => reject(new Error(`ralph ui exited ${code}: ${out}`)));
  });
  return { child, url, startMs: performance.now() - started };
}

/** Navigation start to the first rows in the DOM (the page's own performance mark), in ms. */
async function firstPaint(page: Page, origin: string): Promise<number> {
  await page.goto(`${origin}/`, { waitUntil: "commit" });
  await page.waitForSelector("body[data-painted] a.row", { timeout: 30_000 });
  return page.evaluate(() => performance.getEntriesByName("runs-painted")[0]?.startTime ?? Number.NaN);
}

/** One agent_event line whose text is `marker`. */
function eventLine(id: string, marker: string): string {
  return `${JSON.stringify({ v: 1, ts: new Date().toISOString(), run: id, type: "agent_event", iteration: 1, kind: "text", text: marker })}\n`;
}

/** Browser clock minus this process's clock (ms), from the evaluate round trip with the least delay. */
async function clockSkew(page: Page): Promise<number> {
  let best = { rtt: Infinity, skew: 0 };
  for (let i = 0; i < 10; i++) {
    const before = wallMs();
    const browser = await page.evaluate<number>("performance.timeOrigin + performance.now()");
    const after = wallMs();
    if (after - before < best.rtt) best = { rtt: after - before, skew: browser - (before + after) / 2 };
  }
  return best.skew;
}

/** Appends a line to a watched run's events.jsonl; resolves with the ms until the page shows it. */
async function appendToDom(page: Page, events: string, id: string, marker: string, skew: number): Promise<number> {
  // Browser code as text: this file is compiled without the DOM's types. The observer is in place
  // before the append (the line can arrive within a few ms).
  await page.evaluate(`window.benchSeen = new Promise((resolve) => {
    const output = document.getElementById("output");
    new MutationObserver((_, observer) => {
      if (output.lastElementChild?.textContent?.includes(${JSON.stringify(marker)})) {
        observer.disconnect();
        resolve(performance.timeOrigin + performance.now());
      }
    }).observe(output, { childList: true });
  }); true`);
  const at = wallMs();
  appendFileSync(events, eventLine(id, marker));
  const seen = page.evaluate<number>("window.benchSeen");
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`${marker}: not in the page after 10 s`)), 10_000).unref(),
  );
  return (await Promise.race([seen, timeout])) - skew - at;
}

/** The floor: append to a file → fs.watch's callback in this process. */
async function appendToWatch(file: string, id: string, marker: string): Promise<number> {
  let at = 0;
  const seen = new Promise<number>((resolve) => {
    const watcher = watch(file, () => {
      watcher.close();
      resolve(wallMs() - at);
    });
  });
  at = wallMs();
  appendFileSync(file, eventLine(id, marker));
  return seen;
}

/** First paint with 10,000 runs against 10, and append → DOM against append → fs.watch. */
export async function benchUi(runs: number, log: (line: string) => void): Promise<Row[]> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`);
  const many = scratchDir("ui-many");
  const few = scratchDir("ui-few");
  const ids = await populate(many, RUNS);
  await populate(few, FEW);
  log(`ui: ${ids.length} runs written`);
  const samples = new Samples();
  const browser = await openBrowser();
  const servers: ChildProcess[] = [];
  try {
    const page = await browser.context.newPage();
    for (let round = 0; round < runs; round++) {
      for (const [name, project] of [
        ["many", many],
        ["few", few],
      ] as const) {
        const ui = await startUi(project);
        servers.push(ui.child);
        samples.add(`start.${name}`, ui.startMs);
        await page.goto(ui.url, { waitUntil: "commit" }); // sets the cookie
        samples.add(`paint.${name}`, await firstPaint(page, new URL(ui.url).origin));
        if (name === "many") {
          const id = ids[round % ids.length] as string;
          await page.goto(`${new URL(ui.url).origin}/run/0/${id}`, { waitUntil: "commit" });
          await page.waitForSelector("#connection[data-state='live']", { timeout: 30_000 });
          const events = join(runDir(many, id), "events.jsonl");
          const skew = await clockSkew(page);
          log(`ui: browser clock ${skew.toFixed(2)} ms ahead`);
          for (let i = 0; i < APPENDS; i++) {
            samples.add("append.dom", await appendToDom(page, events, id, `bench-${round}-${i}`, skew));
            samples.add("append.watch", await appendToWatch(events, id, `floor-${round}-${i}`));
          }
        }
        ui.child.kill("SIGTERM");
      }
      log(`ui: round ${round + 1}/${runs}`);
    }
  } finally {
    servers.forEach((child) => child.exitCode === null && child.kill("SIGKILL"));
    await browser.close();
  }
  const group = "Dashboard (ralph ui in chromium)";
  const get = (name: string) => samples.get(name);
  const baseline = (label: string, name: string) =>
    get(name) ? { baseline: { label, value: get(name) as NonNullable<ReturnType<typeof get>> } } : {};
  return [
    {
      group,
      figure: `runs table first paint, ${RUNS.toLocaleString("en-US")} runs`,
      unit: "ms",
      value: get("paint.many"),
      ...baseline(`${FEW} runs`, "paint.few"),
      target: `< ${PAINT_TARGET_MS} ms`,
      met: (get("paint.many")?.median ?? Infinity) < PAINT_TARGET_MS,
      note: "navigation start → rows in the DOM (the page's own mark)",
      command: "ralph ui; open /",
    },
    {
      group,
      figure: `ralph ui start-up, ${RUNS.toLocaleString("en-US")} runs`,
      unit: "ms",
      value: get("start.many"),
      ...baseline(`${FEW} runs`, "start.few"),
      note: "spawn → URL printed (every run read once)",
      command: "ralph ui --project <dir>",
    },
    {
      group,
      figure: "append to events.jsonl → line in the page's DOM",
      unit: "ms",
      value: get("append.dom"),
      ...baseline("append → fs.watch callback in node", "append.watch"),
      target: `< ${APPEND_TARGET_MS} ms`,
      met: (get("append.dom")?.median ?? Infinity) < APPEND_TARGET_MS,
      note: `${APPENDS} appends a round; a MutationObserver in the page takes the time (clocks aligned by the least-delay evaluate round trip)`,
      command: "ralph ui; open /run/0/<id>; append an agent_event",
    },
  ];
}
