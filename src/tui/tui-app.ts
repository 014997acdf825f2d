// The terminal UI's state and screens: the runs view and the run view over the dashboard's live rows
// (RunsHub), the keys that act on the selected run through the one owner of run control (requestControl,
// answerRun, the dashboard's continue, `ralph set` and `ralph report` themselves), and frames drawn at most
// ten times a second. The terminal itself (raw mode, alternate screen, signals) is the caller's.
import { spawn } from "node:child_process";
import { answerRun } from "../control/answer-run.js";
import { requestControl } from "../control/control-request.js";
import { RALPH_MAIN } from "../process/ralph-entry.js";
import { runPaths } from "../store/run-paths.js";
import { runAction } from "../ui/actions.js";
import type { Project } from "../ui/projects.js";
import type { RunRow } from "../ui/run-row.js";
import { RunsHub } from "../ui/runs-hub.js";
import { splitShellWords } from "../util/shell-words.js";
import type { Segment } from "../view/render-lines.js";
import { actionRefusal, RUN_KEYS, type RunAction } from "./key-rules.js";
import type { Key } from "./keys.js";
import { cellWidth, fitLine, span, type Span } from "./line-fit.js";
import { RunDetail } from "./run-detail.js";
import { iterationLines, paneLines, runHeader, type Pane } from "./run-view.js";
import {
  FILTERS,
  headerLine,
  listRuns,
  rowKey,
  runLine,
  type ListedRun,
  type RunFilter,
  type RunSort,
} from "./runs-view.js";
import type { Cursor } from "./screen.js";

/** The fastest the screen is redrawn. */
export const FRAME_MS = 100;

/** What the app needs from its terminal. */
export interface TuiHost {
  size(): { columns: number; rows: number };
  color: boolean;
  draw(lines: string[], cursor: Cursor | null): void;
  /** Leaves the TUI (never touching a run). */
  quit(): void;
  /** Milliseconds since the epoch shown as "now" (RALPH_TUI_NOW fixes it for the golden screens). */
  now(): number;
}

type Prompt = { kind: "answer" | "continue" | "set"; text: string } | { kind: "confirm-stop-now" };

interface OpenRun {
  key: string;
  detail: RunDetail;
  pane: Pane;
  fromEnd: number;
  report: Span[][] | null;
}

/** The TUI over `projects`. */
export class TuiApp {
  private readonly hub: RunsHub;
  private filter: RunFilter = "all";
  private sort: RunSort = "age";
  private readonly folded = new Set<string>();
  private selected: string | null = null;
  private open: OpenRun | null = null;
  private prompt: Prompt | null = null;
  private message: Span | null = null;
  private help = false;
  private dirty = true;
  private timer: NodeJS.Timeout | null = null;
  private lastFrame = 0;
  private readonly ticker: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly projects: Project[],
    private readonly host: TuiHost,
  ) {
    // Live rows are read again four times a second rather than at every line an agent writes: the screen
    // shows no more than that, and watching each run directory woke the TUI a thousand times a second
    // with eight agents streaming (bench/tui.ts). The runs directory is still watched: a new run shows at once.
    this.hub = new RunsHub(projects, { rescanMs: 250, watchRuns: false });
    this.hub.subscribe(() => this.invalidate());
    // Ages change every second; only the lines that change are drawn.
    this.ticker = setInterval(() => this.invalidate(), 1000);
    this.invalidate();
  }

  /** Stops every watcher and timer; runs are left as they are. */
  close(): void {
    this.closed = true;
    clearInterval(this.ticker);
    if (this.timer) clearTimeout(this.timer);
    this.open?.detail.close();
    this.hub.close();
  }

  /** Asks for a frame: drawn at once if the last was long enough ago, else once FRAME_MS has passed. */
  invalidate(): void {
    this.dirty = true;
    if (this.timer || this.closed) return;
    const wait = Math.max(0, this.lastFrame + FRAME_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.dirty || this.closed) return;
      this.dirty = false;
      this.lastFrame = Date.now();
      this.drawNow();
    }, wait);
  }

  /** Draws the screen whole on the next frame (after a resize). */
  drawNow(): void {
    const { lines, cursor } = this.frame();
    this.host.draw(lines, cursor);
  }

  private rows(): RunRow[] {
    return this.hub.all();
  }

  private listed(): ListedRun[] {
    return listRuns(this.rows(), this.filter, this.sort, this.folded);
  }

  /** The run keys act on: the open one, else the selected one. */
  private target(): RunRow | null {
    const key = this.open?.key ?? this.selected;
    const row = key === null ? undefined : this.rows().find((candidate) => rowKey(candidate) === key);
    return row ?? null;
  }

  private projectOf(row: RunRow): Project {
    return this.projects.find((project) => project.key === row.project) as Project;
  }

  private say(style: Span["style"], text: string): void {
    this.message = span(style, text);
    this.invalidate();
  }

  // ---- keys ----

  /** Handles one key. */
  key(key: Key): void {
    if (this.prompt) return this.promptKey(key);
    if (this.help) {
      this.help = false;
      return this.invalidate();
    }
    const char = typeof key === "object" ? key.char : null;
    if (key === "ctrl-c" || char === "q") return this.host.quit();
    if (char === "?") {
      this.help = true;
      return this.invalidate();
    }
    const action = RUN_KEYS.find((entry) => entry.key === char)?.action;
    if (action) return this.runKey(action);
    if (this.open) return this.runViewKey(key, char);
    this.runsViewKey(key, char);
  }

  private runsViewKey(key: Key, char: string | null): void {
    const listed = this.listed();
    const index = Math.max(
      0,
      listed.findIndex((item) => rowKey(item.row) === this.selected),
    );
    const move = (to: number) => {
      const item = listed[Math.max(0, Math.min(listed.length - 1, to))];
      if (item) this.selected = rowKey(item.row);
      this.message = null;
      this.invalidate();
    };
    if (key === "up" || char === "k") return move(index - 1);
    if (key === "down" || char === "j") return move(index + 1);
    if (key === "home" || char === "g") return move(0);
    if (key === "end" || char === "G") return move(listed.length - 1);
    if (key === "pageup") return move(index - 10);
    if (key === "pagedown") return move(index + 10);
    if (key === "enter") {
      const item = listed[index];
      if (item) this.openRun(item.row);
      return;
    }
    if (char === " " || key === "left" || key === "right") {
      const item = listed[index];
      const parent = item?.child
        ? listed
            .slice(0, index)
            .reverse()
            .find((candidate) => !candidate.child)
        : item;
      if (!parent || parent.children === 0) return;
      const parentKey = rowKey(parent.row);
      if (key === "left" || (char === " " && !this.folded.has(parentKey))) this.folded.add(parentKey);
      else this.folded.delete(parentKey);
      this.selected = parentKey;
      return this.invalidate();
    }
    if (char === "f") {
      this.filter = FILTERS[(FILTERS.indexOf(this.filter) + 1) % FILTERS.length] as RunFilter;
      return this.invalidate();
    }
    if (char === "t") {
      this.sort = this.sort === "age" ? "spend" : "age";
      return this.invalidate();
    }
  }

  private runViewKey(key: Key, char: string | null): void {
    const open = this.open as OpenRun;
    const page = Math.max(1, this.host.size().rows - 12);
    const scroll = (by: number) => {
      const lines = this.paneSource(open).total;
      open.fromEnd = Math.max(0, Math.min(lines, open.fromEnd + by));
      // Scrolled to the top of what is held: read one more window back.
      if (open.fromEnd >= lines - page && open.pane !== "report")
        void open.detail.earlier(open.pane).then(() => this.invalidate());
      this.invalidate();
    };
    if (key === "escape" || key === "left") {
      if (open.pane === "report") {
        open.pane = "output";
        open.fromEnd = 0;
        return this.invalidate();
      }
      return this.closeRun();
    }
    if (key === "up" || char === "k") return scroll(1);
    if (key === "down" || char === "j") return scroll(-1);
    if (key === "pageup") return scroll(page);
    if (key === "pagedown") return scroll(-page);
    if (key === "home" || char === "g") return scroll(Number.MAX_SAFE_INTEGER);
    if (key === "end" || char === "G") {
      open.fromEnd = 0;
      return this.invalidate();
    }
    if (char === "l") {
      open.pane = open.pane === "output" ? "log" : "output";
      open.fromEnd = 0;
      return this.invalidate();
    }
  }

  private runKey(action: RunAction): void {
    const row = this.target();
    if (!row) return this.say("warn", "no run selected");
    const project = this.projectOf(row);
    const refusal = actionRefusal(project.dir, row, action);
    // A key that does not apply does nothing but say why.
    if (refusal) return this.say("warn", `${RUN_KEYS.find((entry) => entry.action === action)?.key ?? ""}: ${refusal}`);
    switch (action) {
      case "pause":
      case "resume":
      case "stop": {
        const outcome = requestControl(project.dir, row.id, action);
        return this.say(outcome.ok ? "done" : "warn", outcome.message);
      }
      case "stop-now":
        this.prompt = { kind: "confirm-stop-now" };
        return this.invalidate();
      case "answer":
      case "continue":
      case "set":
        this.prompt = { kind: action, text: "" };
        return this.invalidate();
      case "report":
        return this.showReport(row, project);
    }
  }

  private promptKey(key: Key): void {
    const prompt = this.prompt as Prompt;
    const char = typeof key === "object" ? key.char : null;
    if (prompt.kind === "confirm-stop-now") {
      this.prompt = null;
      const row = this.target();
      if ((char === "y" || char === "Y") && row) {
        const outcome = requestControl(this.projectOf(row).dir, row.id, "stop-now");
        return this.say(outcome.ok ? "done" : "warn", outcome.message);
      }
      return this.say("dim", "stop now: cancelled");
    }
    if (key === "escape" || key === "ctrl-c") {
      this.prompt = null;
      return this.say("dim", `${prompt.kind}: cancelled`);
    }
    if (key === "backspace") prompt.text = [...prompt.text].slice(0, -1).join("");
    else if (key === "ctrl-u") prompt.text = "";
    else if (char !== null && prompt.text.length < 16_384) prompt.text += char;
    else if (key === "enter") {
      this.prompt = null;
      this.submit(prompt.kind, prompt.text);
    }
    this.invalidate();
  }

  private submit(kind: "answer" | "continue" | "set", text: string): void {
    const row = this.target();
    if (!row) return this.say("warn", "no run selected");
    const project = this.projectOf(row);
    if (kind === "answer") {
      const outcome = answerRun(project.dir, row.id, text);
      return this.say(
        outcome.ok ? "done" : "warn",
        outcome.ok
          ? outcome.live
            ? `answer sent: run ${row.id} goes on`
            : `answer recorded: continue run ${row.id} to go on with it`
          : outcome.message,
      );
    }
    const ref = { project, id: row.id, paths: runPaths(project.dir, row.id) };
    if (kind === "continue") {
      this.say("dim", `continuing run ${row.id}…`);
      void runAction(ref, "continue", { max_iterations: text.trim() }).then((result) =>
        this.say(result.status < 300 ? "done" : "warn", result.message),
      );
      return;
    }
    const words = splitShellWords(text);
    if (!words.ok) return this.say("warn", `set: ${words.message}`);
    if (words.words.length === 0) return this.say("warn", "set: nothing to set (key=value, e.g. max_iterations=4)");
    this.say("dim", `setting ${words.words.join(" ")} on run ${row.id}…`);
    void ralphOutput(project.dir, ["set", row.id, ...words.words]).then(({ code, stdout, stderr }) =>
      this.say(
        code === 0 ? "done" : "warn",
        (code === 0 ? stdout : stderr)
          .trim()
          .split("\n")[0]
          ?.replace(/^ralph: /, "") ?? "",
      ),
    );
  }

  private showReport(row: RunRow, project: Project): void {
    if (!this.open || this.open.key !== rowKey(row)) this.openRun(row);
    const open = this.open as OpenRun | null;
    if (!open) return;
    open.pane = "report";
    open.fromEnd = Number.MAX_SAFE_INTEGER;
    open.report = [[span("dim", "reading the report…")]];
    this.invalidate();
    void ralphOutput(project.dir, ["report", row.id]).then(({ code, stdout, stderr }) => {
      const text = code === 0 ? stdout : stderr;
      open.report = text
        .trimEnd()
        .split("\n")
        .map((line) => [span(code === 0 ? "plain" : "warn", line)]);
      open.fromEnd = Math.max(0, open.report.length);
      this.invalidate();
    });
  }

  private openRun(row: RunRow): void {
    this.closeRun();
    const project = this.projectOf(row);
    const detail = new RunDetail(runPaths(project.dir, row.id), row.max_iterations ?? 0, () => this.invalidate());
    this.open = { key: rowKey(row), detail, pane: "output", fromEnd: 0, report: null };
    this.selected = rowKey(row);
    this.message = null;
    void detail.open();
    this.invalidate();
  }

  private closeRun(): void {
    this.open?.detail.close();
    this.open = null;
    this.invalidate();
  }

  /** The open pane's lines; only those shown are turned into spans. */
  private paneSource(open: OpenRun): { total: number; slice(from: number, to: number): Span[][] } {
    if (open.pane === "report") {
      const report = open.report ?? [];
      return { total: report.length, slice: (from, to) => report.slice(from, to) };
    }
    if (open.pane === "log") {
      const log = open.detail.log;
      return { total: log.length, slice: (from, to) => log.slice(from, to).map((line) => [span("dim", line)]) };
    }
    const output = open.detail.output;
    return {
      total: output.length,
      slice: (from, to) =>
        output.slice(from, to).map((line: Segment[]) => line.map((segment) => span(segment.tone, segment.text))),
    };
  }

  // ---- frames ----

  /** The whole screen: title, the view, the question, prompt, message and key bar. */
  frame(): { lines: string[]; cursor: Cursor | null } {
    const { columns, rows } = this.host.size();
    const width = Math.max(20, columns);
    const height = Math.max(6, rows);
    const now = this.host.now();
    this.keepSelection();
    const row = this.target();
    const fit = (spans: Span[], fill: Span["style"] = "plain") => fitLine(spans, width, this.host.color, fill);
    const bottom: Span[][] = [];
    if (row?.question)
      bottom.push([span("warn", `? ${row.id} asks: `), span("bold", row.question), span("dim", "  (a: answer)")]);
    let cursor: Cursor | null = null;
    if (this.prompt) {
      const label = promptLabel(this.prompt, row);
      const text = this.prompt.kind === "confirm-stop-now" ? "" : this.prompt.text;
      // The end of a long answer shows: what is being typed stays in sight.
      const room = Math.max(1, width - cellWidth(label) - 1);
      const shown = [...text].slice(-room).join("");
      bottom.push([span("bold", label), span("plain", shown)]);
      cursor = {
        row: height - 2 - (this.message ? 1 : 0),
        col: Math.min(width - 1, cellWidth(label) + cellWidth(shown)),
      };
    }
    if (this.message) bottom.push([this.message]);
    const keyBar = this.keyBar(row, width);
    const title = this.titleLine(width);
    const room = height - 2 - bottom.length;
    const body = this.help
      ? this.helpLines(row)
      : this.open
        ? this.runViewLines(this.open, room, now)
        : this.runsViewLines(room, now);
    const lines = [fit(title, "title")];
    for (let index = 0; index < room; index++) {
      const line = body[index] ?? [];
      const selected = line[0]?.style === "select";
      lines.push(fit(line, selected ? "select" : "plain"));
    }
    for (const line of bottom) lines.push(fit(line));
    lines.push(fit(keyBar));
    if (cursor) cursor.row = lines.length - 2 - (this.message ? 1 : 0);
    return { lines, cursor };
  }

  private titleLine(width: number): Span[] {
    const names = this.projects.map((project) => project.name).join(", ");
    const runs = this.rows().length;
    const where = this.open
      ? `run ${this.open.key.split("/").slice(1).join("/")}`
      : `${runs} run${runs === 1 ? "" : "s"} · filter ${this.filter} (f) · sort ${this.sort} (t)`;
    const text = ` ralph tui · ${names} · ${where}`;
    return [span("title", width >= 40 ? text : " ralph tui")];
  }

  /** Keeps the selection on a listed run: the first one when none (or a run no longer listed) was. */
  private keepSelection(): void {
    if (this.open) return;
    const listed = this.listed();
    if (listed.length > 0 && (this.selected === null || !listed.some((item) => rowKey(item.row) === this.selected)))
      this.selected = rowKey((listed[0] as ListedRun).row);
  }

  private runsViewLines(room: number, now: number): Span[][] {
    const listed = this.listed();
    if (listed.length === 0)
      return [
        [
          span(
            "dim",
            this.rows().length === 0
              ? "  no runs yet: start one with ralph run (they show here live)"
              : `  no ${this.filter} runs (f: change the filter)`,
          ),
        ],
      ];
    const index = listed.findIndex((item) => rowKey(item.row) === this.selected);
    const visible = Math.max(1, room - 1);
    const first = Math.max(0, Math.min(index - Math.floor(visible / 2), listed.length - visible));
    const { columns } = this.host.size();
    return [
      headerLine(columns),
      ...listed
        .slice(first, first + visible)
        .map((item) => runLine(item, rowKey(item.row) === this.selected, columns, now)),
    ];
  }

  private runViewLines(open: OpenRun, room: number, now: number): Span[][] {
    const row = this.rows().find((candidate) => rowKey(candidate) === open.key);
    if (!row) return [[span("warn", "this run is no longer listed (esc: back)")]];
    const header = runHeader(row, now);
    const iterationRoom = Math.max(
      2,
      Math.min(open.detail.iterations.size + 1, Math.floor((room - header.length) / 3)),
    );
    const reading = !open.detail.loaded;
    const iterations = iterationLines([...open.detail.iterations.values()], iterationRoom, reading);
    const paneRoom = Math.max(2, room - header.length - iterations.length);
    const source = this.paneSource(open);
    open.fromEnd = Math.min(open.fromEnd, Math.max(0, source.total - (paneRoom - 1)));
    return [
      ...header,
      ...iterations,
      ...paneLines(
        {
          pane: open.pane,
          total: source.total,
          slice: source.slice,
          fromEnd: open.fromEnd,
          earlier: open.pane !== "report" && open.detail.hasEarlier(open.pane),
          reading: open.pane !== "report" && reading,
        },
        paneRoom,
      ),
    ];
  }

  private keyBar(row: RunRow | null, width: number): Span[] {
    const spans: Span[] = [];
    const short = width < 120;
    for (const { key, action, label } of RUN_KEYS) {
      const off = row === null || actionRefusal(this.projectOf(row).dir, row, action) !== null;
      const text = short ? `${key} ${label.split(" ").pop() ?? label}` : `${key} ${label}`;
      spans.push(span(off ? "off" : "plain", this.host.color ? text : off ? `(${text})` : text), span("plain", " "));
    }
    spans.push(span("dim", this.open ? "esc back" : "enter open"), span("plain", " "), span("dim", "? help q quit"));
    return spans;
  }

  private helpLines(row: RunRow | null): Span[][] {
    const lines: Span[][] = [
      [span("bold", "Keys (any key closes this help)")],
      [span("plain", "  ↑/↓ or j/k select (runs) or scroll (run view) · pgup/pgdn/home/end · enter open · esc back")],
      [span("plain", "  space fold/unfold a --parallel parent's children · f filter by state · t sort by age/spend")],
      [span("plain", "  l agent output / run log · q or ctrl-c leave the TUI (runs go on, untouched)")],
      [],
      [span("bold", row ? `On run ${row.id}:` : "On the selected run (none selected):")],
    ];
    for (const { key, action, label } of RUN_KEYS) {
      const refusal = row === null ? "no run selected" : actionRefusal(this.projectOf(row).dir, row, action);
      lines.push([
        span(refusal ? "off" : "plain", `  ${key}  ${label.padEnd(9)}`),
        span(refusal ? "dim" : "done", refusal ? `  disabled: ${refusal}` : "  available"),
      ]);
    }
    lines.push([
      span(
        "dim",
        "  S asks for a confirmation; c asks for a new iteration cap; e asks for key=value changes; a for the answer",
      ),
    ]);
    return lines;
  }
}

function promptLabel(prompt: Prompt, row: RunRow | null): string {
  const id = row?.id ?? "?";
  switch (prompt.kind) {
    case "confirm-stop-now":
      return `stop run ${id} NOW, ending its agent mid-iteration? y/n `;
    case "answer":
      return `answer ${id}> `;
    case "continue":
      return `continue ${id}: new iteration cap (empty: as it was)> `;
    case "set":
      return `set ${id} (key=value ...)> `;
  }
}

/** Runs `ralph ARGS` in `cwd` (argv, no shell) and gives its exit code and output. */
function ralphOutput(cwd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RALPH_MAIN, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", (error) => resolve({ code: -1, stdout, stderr: error.message }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
