// A run whose events.jsonl is as large as asked, made in seconds: a real run's first and last events around
// megabytes of agent output, written in large blocks.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes run `id` under `projectDir` with an events.jsonl of about `mb` MB of agent events of `kind`
 * ("text" shows all its 2,000 lines, "tool_result" one); returns its run directory.
 */
export function writeBigRun(
  projectDir: string,
  id: string,
  mb: number,
  kind: "text" | "tool_result" = "text",
  lastWords = "the last line",
): string {
  const dir = join(projectDir, ".ralph", "runs", id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ts = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();
  const event = (ms: number, fields: Record<string, unknown>) =>
    `${JSON.stringify({ v: 1, ts: ts(ms), run: id, ...fields })}\n`;
  const text = "y\n".repeat(2000);
  const block = Buffer.from(
    Array.from({ length: 256 }, () => event(10, { type: "agent_event", iteration: 1, kind, text })).join(""),
  );
  const fd = openSync(join(dir, "events.jsonl"), "w", 0o600);
  try {
    writeSync(fd, event(0, { type: "run_started", agent: "command", max_iterations: 1, cwd: projectDir }));
    writeSync(
      fd,
      event(1, { type: "iteration_started", iteration: 1, max_iterations: 1, task: null, agent: "command" }),
    );
    for (let written = 0; written < mb * 2 ** 20; written += block.length) writeSync(fd, block);
    writeSync(fd, event(20, { type: "agent_event", iteration: 1, kind: "text", text: lastWords }));
    writeSync(
      fd,
      event(30, {
        type: "iteration_ended",
        iteration: 1,
        result: "continue",
        agent: "command",
        exit_code: 0,
        duration_ms: 20,
      }),
    );
    writeSync(
      fd,
      event(31, { type: "run_ended", reason: "MAX_ITERATIONS", exit_code: 3, detail: "reached max_iterations 1" }),
    );
  } finally {
    closeSync(fd);
  }
  writeFileSync(join(dir, "run.log"), `${ts(0)} run started\n${ts(31)} run ended: MAX_ITERATIONS\n`, { mode: 0o600 });
  return dir;
}
