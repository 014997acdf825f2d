// Reads a task list: a prd.json (`userStories[].passes`) or a Markdown checklist (`- [ ]` / `- [x]`).
import { realpathSync } from "node:fs";
import { readRegular, RunFileError } from "../store/regular-file.js";
import { extname } from "node:path";

/** One unit of work from the task list. */
export interface Task {
  id: string;
  title: string;
  done: boolean;
  /** prd.json only: lower numbers come first. */
  priority?: number;
  /** Checklists only: the 1-based line the item is on. */
  line?: number;
  /** prd.json: the story's `description`. */
  description?: string;
  /** prd.json: the story's `acceptanceCriteria`, one entry each. */
  acceptance?: string[];
  /** prd.json: the story's `notes`; a checklist: the item's indented lines below it. */
  notes?: string;
}

/** Which kind of file the tasks came from. */
export type TaskFormat = "prd" | "checklist";

/** A parsed task list, or what is wrong with the file (never "no work" for a broken file). */
export type TaskListResult =
  { ok: true; format: TaskFormat; tasks: Task[] } | { ok: false; file: string; message: string };

/** Reads and parses a task file (path absolute or relative to the process's cwd). */
export function loadTasks(file: string): TaskListResult {
  let text: string;
  try {
    // A project file (links allowed), but never a FIFO or device, which would block or never end.
    text = readRegular(realpathSync(file)).toString("utf8");
  } catch (error) {
    if (error instanceof RunFileError)
      return { ok: false, file, message: error.message.slice(error.message.lastIndexOf(": ") + 2) };
    return { ok: false, file, message: describeReadError(error) };
  }
  return parseTasks(text, file);
}

/** Parses task-file text; `.json` (or text starting with `{`) is a prd.json, anything else a checklist. */
export function parseTasks(text: string, file: string): TaskListResult {
  const body = text.replace(/^\uFEFF/, "");
  const extension = extname(file).toLowerCase();
  const isJson = extension === ".json" || (extension === "" && body.trimStart().startsWith("{"));
  return isJson ? parsePrd(body, file) : parseChecklist(body, file);
}

/** The task to work on next: lowest `priority` among incomplete tasks, ties (and checklists) in file order. */
export function firstIncomplete(tasks: Task[]): Task | null {
  let best: Task | null = null;
  for (const task of tasks) {
    if (task.done) continue;
    if (best === null || rank(task) < rank(best)) best = task;
  }
  return best;
}

/** A one-line name for a task, e.g. "US-002: Add login form" or "line 12: Add login form". */
export function describeTask(task: Task): string {
  const label = task.line !== undefined ? `line ${task.line}` : task.id;
  return task.title === "" ? label : `${label}: ${task.title}`;
}

function rank(task: Task): number {
  return task.priority ?? Number.POSITIVE_INFINITY;
}

function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return "does not exist";
    case "EISDIR":
      return "is a directory, not a task file";
    case "EACCES":
    case "EPERM":
      return "cannot be read (permission denied)";
    default:
      return `cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function parsePrd(text: string, file: string): TaskListResult {
  const fail = (message: string): TaskListResult => ({ ok: false, file, message });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return fail(`is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!isRecord(data)) return fail('must be a JSON object with a "userStories" list');
  const stories = data["userStories"];
  if (!Array.isArray(stories)) return fail('has no "userStories" list');
  const tasks: Task[] = [];
  for (const [index, story] of stories.entries()) {
    const where = `userStories[${index}]`;
    if (!isRecord(story)) return fail(`${where} is not an object`);
    const id = story["id"];
    if (!(typeof id === "string" && id.trim() !== "") && !(typeof id === "number" && Number.isFinite(id))) {
      return fail(`${where} has no "id"`);
    }
    const title = story["title"];
    if (typeof title !== "string" || title.trim() === "") return fail(`${where} (${String(id)}) has no "title"`);
    const priority = story["priority"];
    if (priority !== undefined && !(typeof priority === "number" && Number.isFinite(priority))) {
      return fail(`${where} (${String(id)}) has a "priority" that is not a number`);
    }
    const task: Task = { id: String(id), title: title.trim(), done: story["passes"] === true, ...storyText(story) };
    if (priority !== undefined) task.priority = priority;
    tasks.push(task);
  }
  return { ok: true, format: "prd", tasks };
}

/** The story's own words for the agent: description, acceptance criteria and notes, where it has them. */
function storyText(story: Record<string, unknown>): Pick<Task, "description" | "acceptance" | "notes"> {
  const text = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : undefined);
  const listed = story["acceptanceCriteria"];
  const acceptance = Array.isArray(listed)
    ? listed
        .map((entry) => (typeof entry === "string" ? entry.trim() : JSON.stringify(entry)))
        .filter((entry) => entry !== "")
    : text(listed)
      ? [text(listed) as string]
      : [];
  const notes = Array.isArray(story["notes"])
    ? story["notes"]
        .filter((entry) => typeof entry === "string")
        .join("\n")
        .trim() || undefined
    : text(story["notes"]);
  const description = text(story["description"]);
  return {
    ...(description ? { description } : {}),
    ...(acceptance.length > 0 ? { acceptance } : {}),
    ...(notes ? { notes } : {}),
  };
}

const ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])\s+\[([ xX])\](?:\s+(.*))?$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// Sections for later work: their items are not part of what the loop must finish.
const EXCLUDED_HEADING = /^(?:optional|future|nice[\s-]to[\s-]have)\b/i;

function parseChecklist(text: string, file: string): TaskListResult {
  const tasks: Task[] = [];
  let items = 0;
  let excludedLevel: number | null = null;
  let fence: string | null = null;
  const lines = text.split(/\r\n|\r|\n/);
  for (const [index, line] of lines.entries()) {
    const fenceMatch = FENCE.exec(line);
    if (fence !== null) {
      // A fence closes on a line of only the same character, at least as many as opened it.
      if (fenceMatch?.[1]?.startsWith(fence) && line.trim() === fenceMatch[1]) fence = null;
      continue;
    }
    if (fenceMatch?.[1]) {
      fence = fenceMatch[1];
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading?.[1]) {
      const level = heading[1].length;
      if (excludedLevel !== null && level <= excludedLevel) excludedLevel = null;
      const name = (heading[2] ?? "").replace(/\s#+$/, "").replace(/[*_`]/g, "").trim();
      if (excludedLevel === null && EXCLUDED_HEADING.test(name)) excludedLevel = level;
      continue;
    }
    const item = ITEM.exec(line);
    if (!item) continue;
    items += 1;
    if (excludedLevel !== null) continue;
    const notes = indentedBelow(lines, index);
    tasks.push({
      id: String(index + 1),
      title: (item[2] ?? "").trim(),
      done: item[1] !== " ",
      line: index + 1,
      ...(notes ? { notes } : {}),
    });
  }
  if (items === 0)
    return { ok: false, file, message: "has no checklist items (lines like `- [ ] task` or `- [x] done`)" };
  return { ok: true, format: "checklist", tasks };
}

/** The lines indented deeper than item `at`, up to the next item or a line as shallow as it; common indent removed. */
function indentedBelow(lines: readonly string[], at: number): string {
  const depth = indentOf(lines[at] ?? "");
  const body: string[] = [];
  for (let index = at + 1; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (line.trim() === "") {
      body.push("");
      continue;
    }
    if (indentOf(line) <= depth || ITEM.test(line)) break;
    body.push(line);
  }
  while (body.at(-1) === "") body.pop();
  const common = Math.min(...body.filter((line) => line !== "").map(indentOf));
  return body.map((line) => line.slice(common)).join("\n");
}

function indentOf(line: string): number {
  return line.length - line.replace(/^[ \t]+/, "").length;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
