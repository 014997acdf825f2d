// Golden screens of `ralph tui`: the runs view and the run view at 80×24 and 160×48, read back as text from
// a headless terminal and compared with test/golden/tui-*.txt. The TUI's clock is fixed (RALPH_TUI_NOW) a few
// seconds after the last run started, so an age never turns from "59s" into "1m" on a slow machine; the
// durations, sizes, resource figures (cgroup mode only) and the temporary project's name still change from
// run to run: every number is masked to 9 and runs of spaces to two. A screen is taken only once the frame
// it waits for shows the run's files read (not the frame drawn on enter, before they are): the comparison
// is deterministic. RALPH_UPDATE_GOLDEN=1 writes the files anew.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, fakeAgent, readStatus, runRalph, tempProjects } from "../helpers/cli.js";
import { startTui, type TuiTerminal } from "../helpers/tui-terminal.js";

const project = tempProjects("ralph-tui-golden-");
const tuis: TuiTerminal[] = [];
after(() => tuis.forEach((tui) => tui.running() && tui.pty.kill("SIGKILL")));

const goldenFile = (name: string) => fileURLToPath(new URL(`../../../test/golden/${name}`, import.meta.url));

/** A screen with what changes between runs masked. */
function masked(screen: string, dir: string): string {
  return screen
    .split("\n")
    .map((line) =>
      line
        .replaceAll(basename(dir), "PROJECT")
        .replace(/ · cpu [\d.]+s · mem [\d.]+ MiB · \d+ procs/, "")
        .replace(/\d+(\.\d+)?/g, "9")
        .replace(/ {2,}/g, "  ")
        .trimEnd(),
    )
    .join("\n")
    .trimEnd();
}

/** Whether the frame is drawn whole: its last row, the key bar, is written last. */
const whole = (screen: string): boolean => (screen.split("\n").at(-1) ?? "").includes("(p pause)");

function compare(name: string, actual: string): void {
  const file = goldenFile(name);
  if (process.env.RALPH_UPDATE_GOLDEN === "1") writeFileSync(file, `${actual}\n`);
  assert.equal(actual, readFileSync(file, "utf8").trimEnd(), `${name} differs from the golden screen`);
}

describe("ralph tui golden screens", () => {
  let dir = "";
  test("two ended runs", async () => {
    dir = project();
    const first = await runRalph(
      [
        "run",
        "--name",
        "alpha",
        "-n",
        "2",
        "build the parser",
        ...fakeAgent("--print", "reading src/parse.ts", "--print", "the tests pass"),
      ],
      dir,
    );
    assert.equal(first.code, 3, first.stderr);
    const second = await runRalph(
      [
        "run",
        "--name",
        "beta",
        "-n",
        "3",
        "--completion-promise",
        "FIN",
        "write the docs",
        ...fakeAgent("--print", "docs written", "--promise", "FIN"),
      ],
      dir,
    );
    assert.equal(second.code, 0, second.stderr);
  });
  for (const [columns, rows] of [
    [80, 24],
    [160, 48],
  ] as const) {
    test(`runs view and run view at ${columns}×${rows}`, async () => {
      const lastStart = Date.parse(String(readStatus(join(dir, ".ralph", "runs", "beta")).started_at));
      const now = new Date(lastStart + 5000).toISOString();
      const t = startTui(dir, [], columns, rows, cleanEnv({ NO_COLOR: "1", RALPH_TUI_NOW: now }));
      tuis.push(t);
      const runs = await t.waitFor(
        (screen) => whole(screen) && /› beta\s+DONE/.test(screen) && /alpha\s+MAX_ITERATIONS/.test(screen),
        "both runs",
      );
      compare(`tui-runs-${columns}x${rows}.txt`, masked(runs, dir));
      t.type("\r");
      // The frame drawn on enter comes before the run's files are read (its pane says "reading…"); the one
      // to compare is the frame after, which shows the iterations and output together.
      const run = await t.waitFor(
        (screen) => whole(screen) && /── agent output ── lines \d+-\d+ of \d+/.test(screen),
        "the run view with the run's files read",
      );
      compare(`tui-run-${columns}x${rows}.txt`, masked(run, dir));
      t.type("q");
      await t.exited;
    });
  }
});
