// Builds the text given to the agent: the prompt from state.md, the current task, and failing-check context.

/** What goes into one iteration's prompt besides the user's text. */
export interface PromptParts {
  prompt: string;
  task: string | null;
  failingChecks: string;
}

/** The prompt for one iteration; `{{task}}` in the prompt is replaced, otherwise the task is appended. */
export function buildPrompt(parts: PromptParts): string {
  let text = parts.prompt;
  if (parts.task !== null) {
    text = text.includes("{{task}}")
      ? text.split("{{task}}").join(parts.task)
      : `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}\n## Current task\n\n${parts.task}\n`;
  }
  if (parts.failingChecks !== "") {
    text = `${text}${text.endsWith("\n") ? "" : "\n"}\n## Completion checks that failed last iteration\n\n${parts.failingChecks}\n`;
  }
  return text;
}
