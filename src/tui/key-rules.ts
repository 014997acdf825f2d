// Which of the terminal UI's run keys apply to a run, and why not: the preconditions the CLI and the
// dashboard apply (control-request.ts, answer-run.ts), read without acting, so a key is shown disabled
// with the very line its command would refuse with.
import { answerRefusal } from "../control/answer-run.js";
import { controlRefusal, foreignRefusal } from "../control/control-request.js";
import { entryKind } from "../store/regular-file.js";
import { runPaths } from "../store/run-paths.js";
import type { RunSummary } from "../store/run-summary.js";

/** What a run key asks for. */
export type RunAction = "pause" | "resume" | "stop" | "stop-now" | "continue" | "set" | "answer" | "report";

/** The run keys, in the order the key bar shows them. */
export const RUN_KEYS: Array<{ key: string; action: RunAction; label: string }> = [
  { key: "p", action: "pause", label: "pause" },
  { key: "r", action: "resume", label: "resume" },
  { key: "s", action: "stop", label: "stop" },
  { key: "S", action: "stop-now", label: "stop now" },
  { key: "c", action: "continue", label: "continue" },
  { key: "e", action: "set", label: "set" },
  { key: "a", action: "answer", label: "answer" },
  { key: "o", action: "report", label: "report" },
];

/** Why `action` does not apply to run `summary` of the project in `projectDir`, or null when it does. */
export function actionRefusal(projectDir: string, summary: RunSummary, action: RunAction): string | null {
  const id = summary.id;
  switch (action) {
    case "pause":
    case "resume":
    case "stop":
    case "stop-now":
      return controlRefusal(summary, entryKind(runPaths(projectDir, id).pause), action);
    case "answer":
      return answerRefusal(summary);
    case "continue":
      // As `ralph continue` refuses before it reads the run's settings.
      if (summary.active) return `run ${id} is live (pid ${summary.pid ?? "?"}); stop it first with ralph stop ${id}`;
      return (
        foreignRefusal(summary, "continue") ??
        (summary.mode === "hook"
          ? `run ${id} is an in-session loop; start a new one in Claude Code with ralph hook start`
          : null)
      );
    case "set":
      return (
        foreignRefusal(summary, "set") ??
        (summary.mode === "hook" ? `run ${id} is an in-session loop; change it in .claude/ralph-loop.local.md` : null)
      );
    case "report":
      return null;
    default: {
      const never: never = action;
      return `unknown action ${String(never)}`;
    }
  }
}
