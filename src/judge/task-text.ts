// Marks a task done in the text of a task list, changing only its flag: the `passes` value of a prd.json
// story (every other byte, one-line stories included, stays as it was) or the box of a checklist line.
import { parseTasks } from "./tasks.js";

/** The text with task `id` marked done, or why it could not be. */
export function markTaskInText(text: string, file: string, id: string): { ok: true; text: string } | { ok: false; message: string } {
  const parsed = parseTasks(text, file);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const task = parsed.tasks.find((candidate) => candidate.id === id);
  if (!task) return { ok: false, message: `has no task ${id} any more` };
  if (parsed.format === "checklist") {
    const lines = text.split(/(\r\n|\r|\n)/);
    // split keeps the separators at odd indexes: line N is at index 2 * (N - 1).
    const at = 2 * ((task.line ?? 0) - 1);
    lines[at] = (lines[at] ?? "").replace(/\[ \]/, "[x]");
    return { ok: true, text: lines.join("") };
  }
  const spans = storySpans(text);
  const story = spans.find((candidate) => candidate.id === id);
  if (!story) return { ok: false, message: `has no task ${id} any more` };
  if (story.passes) return { ok: true, text: `${text.slice(0, story.passes.start)}true${text.slice(story.passes.end)}` };
  // No `passes` yet: added just before the story's closing brace.
  const before = text.slice(0, story.close).trimEnd();
  const comma = before.endsWith("{") ? "" : ",";
  const at = before.length;
  return { ok: true, text: `${text.slice(0, at)}${comma} "passes": true${text.slice(at)}` };
}

interface Span {
  start: number;
  end: number;
}

interface StorySpan {
  id: string;
  passes: Span | null;
  /** Offset of the story's closing `}`. */
  close: number;
}

/** Where each story of `userStories` is in the text, with its id and the span of its `passes` value. */
function storySpans(text: string): StorySpan[] {
  const scanner = new Scanner(text);
  const stories: StorySpan[] = [];
  scanner.value((path, key, start, end) => {
    // A value directly inside userStories[i]: keep its id and the span of its passes.
    if (path.length !== 2 || path[0] !== "userStories") return;
    const index = Number(path[1]);
    const story = (stories[index] ??= { id: "", passes: null, close: -1 });
    if (key === "id") story.id = String(JSON.parse(text.slice(start, end)));
    if (key === "passes") story.passes = { start, end };
  }, (path, end) => {
    if (path.length === 2 && path[0] === "userStories") {
      const story = (stories[Number(path[1])] ??= { id: "", passes: null, close: -1 });
      story.close = end - 1;
    }
  });
  return stories.filter((story) => story.close >= 0);
}

type OnValue = (path: string[], key: string, start: number, end: number) => void;
type OnObjectEnd = (path: string[], end: number) => void;

/** A JSON reader that reports where values are (the text is known to be valid JSON: parseTasks read it). */
class Scanner {
  private at = 0;
  constructor(private readonly text: string) {}

  value(onValue: OnValue, onObjectEnd: OnObjectEnd): void {
    this.skip();
    if (this.text.charCodeAt(0) === 0xfeff) this.at = 1;
    this.read([], onValue, onObjectEnd);
  }

  private skip(): void {
    while (/\s/.test(this.text[this.at] ?? "")) this.at++;
  }

  private read(path: string[], onValue: OnValue, onObjectEnd: OnObjectEnd): void {
    this.skip();
    const char = this.text[this.at];
    if (char === "{" || char === "[") {
      const object = char === "{";
      this.at++;
      for (let index = 0; ; index++) {
        this.skip();
        if (this.text[this.at] === (object ? "}" : "]")) break;
        let key = String(index);
        if (object) {
          const start = this.at;
          this.string();
          key = String(JSON.parse(this.text.slice(start, this.at)));
          this.skip();
          this.at++; // the colon
          this.skip();
        }
        const start = this.at;
        this.read([...path, key], onValue, onObjectEnd);
        onValue(path, key, start, this.at);
        this.skip();
        if (this.text[this.at] === ",") this.at++;
      }
      this.at++;
      if (object) onObjectEnd(path, this.at);
      return;
    }
    if (char === '"') return this.string();
    while (this.at < this.text.length && !/[\s,\]}]/.test(this.text[this.at] ?? "")) this.at++;
  }

  private string(): void {
    this.at++;
    while (this.at < this.text.length && this.text[this.at] !== '"') this.at += this.text[this.at] === "\\" ? 2 : 1;
    this.at++;
  }
}
