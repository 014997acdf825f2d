#!/usr/bin/env node
// The demo agent program: "implements" the first open task of a prd.json or checklist by writing a file (in
// `ralph demo`'s own project only), marks it done, and prints Claude Code-shaped stream-json. Deterministic, offline.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

interface DemoTask {
  id: string;
  title: string;
}

interface TaskFile {
  next: DemoTask | null;
  remainingAfter: number;
  complete(): void;
}

const stepDelayMs = Number(process.env.RALPH_DEMO_DELAY_MS ?? 250);
const iteration = Number(process.env.RALPH_ITERATION ?? 1);

/** The task ralph named in the prompt's "Current task" section (`US-2: title`, `line 3: title`), if any. */
function namedTask(prompt: string): string | null {
  return /^## Current task\n\n([^\n:]+):/m.exec(prompt)?.[1]?.replace(/^line /, "") ?? null;
}

function openPrd(file: string, named: string | null): TaskFile {
  const prd = JSON.parse(readFileSync(file, "utf8")) as {
    userStories: Array<DemoTask & { priority?: number; passes?: boolean }>;
  };
  const open = prd.userStories
    .map((story, index) => ({ story, index }))
    .filter(({ story }) => story.passes !== true)
    .sort((a, b) => (a.story.priority ?? Infinity) - (b.story.priority ?? Infinity) || a.index - b.index);
  const first = open.find(({ story }) => String(story.id) === named)?.story ?? open[0]?.story ?? null;
  return {
    next: first,
    remainingAfter: Math.max(0, open.length - 1),
    complete() {
      if (first) first.passes = true;
      writeFileSync(file, `${JSON.stringify(prd, null, 2)}\n`);
    },
  };
}

function openChecklist(file: string, named: string | null): TaskFile {
  const lines = readFileSync(file, "utf8").split("\n");
  const openIndexes = lines.flatMap((line, index) => (/^\s*[-*] \[ \]/.test(line) ? [index] : []));
  const firstIndex = openIndexes.find((index) => String(index + 1) === named) ?? openIndexes[0];
  const title = firstIndex === undefined ? "" : (lines[firstIndex] ?? "").replace(/^\s*[-*] \[ \]\s*/, "").trim();
  return {
    next: firstIndex === undefined ? null : { id: `item-${firstIndex + 1}`, title },
    remainingAfter: Math.max(0, openIndexes.length - 1),
    complete() {
      if (firstIndex === undefined) return;
      lines[firstIndex] = (lines[firstIndex] ?? "").replace("[ ]", "[x]");
      writeFileSync(file, lines.join("\n"));
    },
  };
}

function emit(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 40) || "task"
  );
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function main(): Promise<void> {
  const prompt = await readStdin();
  const promise = /<promise>([\s\S]*?)<\/promise>/.exec(prompt)?.[1]?.trim() ?? "DONE";
  const sessionId = createHash("sha256").update(`${process.cwd()}:${iteration}`).digest("hex").slice(0, 32);
  emit({ type: "system", subtype: "init", session_id: sessionId, model: "demo", tools: ["Write"] });
  await sleep(stepDelayMs);

  // Started as a reviewer (a `type: review` criterion): it reads the diff, changes nothing, and approves.
  if (process.env.RALPH_REVIEW === "1") return review(prompt, sessionId);
  const tasksFile = process.env.RALPH_DEMO_TASKS;
  const named = namedTask(prompt);
  const tasks = tasksFile
    ? tasksFile.endsWith(".json")
      ? openPrd(tasksFile, named)
      : openChecklist(tasksFile, named)
    : null;
  const task = tasks ? tasks.next : { id: `step-${iteration}`, title: `demo step ${iteration}` };
  let finalText: string;
  if (!task) {
    finalText = `Every task is already done.\n<promise>${promise}</promise>`;
  } else {
    const path = join("demo-output", `${slug(`${task.id} ${task.title}`)}.md`);
    // Files only in `ralph demo`'s own project: in a person's project it marks its task and writes nothing else.
    const writes = process.env.RALPH_DEMO_PROJECT === "1";
    emit({
      type: "assistant",
      message: { content: [{ type: "text", text: `Working on ${task.id}: ${task.title}` }] },
      session_id: sessionId,
    });
    emit({
      type: "assistant",
      message: {
        content: [
          {
            type: "tool_use",
            id: `tool-${iteration}`,
            name: writes ? "Write" : "Think",
            input: writes ? { file_path: path } : { about: task.title },
          },
        ],
      },
      session_id: sessionId,
    });
    await sleep(stepDelayMs);
    if (writes) {
      mkdirSync("demo-output", { recursive: true });
      writeFileSync(path, `# ${task.id}: ${task.title}\n\nImplemented by the demo agent in iteration ${iteration}.\n`);
    }
    tasks?.complete();
    emit({
      type: "user",
      message: {
        content: [
          {
            type: "tool_result",
            tool_use_id: `tool-${iteration}`,
            content: writes
              ? `wrote ${path}`
              : "thought it through (the demo agent writes files only in ralph demo's own project)",
          },
        ],
      },
      session_id: sessionId,
    });
    const allDone = tasks ? tasks.remainingAfter === 0 : iteration >= 3;
    finalText = allDone
      ? `Finished ${task.id}. Every task is done.\n<promise>${promise}</promise>`
      : `Finished ${task.id}; ${tasks ? tasks.remainingAfter : 3 - iteration} to go.`;
  }
  answer(finalText, sessionId, { turns: 2, costUsd: 0.0123, inputTokens: 1200, outputTokens: 340 });
}

/** The demo reviewer's answer: the diff's size, then the verdict as the last line. */
function review(prompt: string, sessionId: string): void {
  const added = (prompt.match(/^\+(?!\+\+ )/gm) ?? []).length;
  const finalText = `The demo reviewer read the iteration's diff (${added} added line${added === 1 ? "" : "s"}) and found nothing to change.\n<verdict>approve</verdict>`;
  answer(finalText, sessionId, { turns: 1, costUsd: 0.0042, inputTokens: 900, outputTokens: 60 });
}

/** The final answer as Claude Code prints it: the assistant's text, then the result with its pretend spend. */
function answer(
  finalText: string,
  sessionId: string,
  spend: { turns: number; costUsd: number; inputTokens: number; outputTokens: number },
): void {
  emit({ type: "assistant", message: { content: [{ type: "text", text: finalText }] }, session_id: sessionId });
  emit({
    type: "result",
    subtype: "success",
    is_error: false,
    result: finalText,
    session_id: sessionId,
    num_turns: spend.turns,
    // A pretend spend, for trying --max-cost with --agent demo; `ralph demo` (RALPH_DEMO_FREE=1) shows none.
    ...(process.env.RALPH_DEMO_FREE === "1" ? {} : { total_cost_usd: spend.costUsd }),
    usage: {
      input_tokens: spend.inputTokens,
      output_tokens: spend.outputTokens,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`demo agent failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
