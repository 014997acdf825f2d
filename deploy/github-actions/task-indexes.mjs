#!/usr/bin/env node
// The plan action's step: the 0-based positions of the task list's pending tasks, read with ralph's own
// task-list parser, as the output `indexes` (a JSON list for a matrix) and `count` (all tasks).
import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const file = (process.env.INPUT_TASKS ?? "").trim();
if (file === "") {
  console.error("tasks: expected the task list's path (prd.json or a Markdown checklist)");
  process.exit(2);
}
// ralph as installed by install-ralph.sh (RALPH_PACKAGE_DIR: another installation of the package).
const packageDir =
  process.env.RALPH_PACKAGE_DIR ||
  join(execFileSync("npm", ["root", "-g"], { encoding: "utf8" }).trim(), "ralph-loop-runner");
const { loadTasks } = await import(pathToFileURL(join(packageDir, "dist", "src", "judge", "tasks.js")).href);
const list = loadTasks(resolve(file));
if (!list.ok) {
  console.error(`tasks ${file}: ${list.message}`);
  process.exit(2);
}
const pending = list.tasks.flatMap((task, index) => (task.done ? [] : [index]));
const outputs = `indexes=${JSON.stringify(pending)}\ncount=${list.tasks.length}\n`;
if (process.env.GITHUB_OUTPUT) appendFileSync(process.env.GITHUB_OUTPUT, outputs);
console.log(`${pending.length} of ${list.tasks.length} task(s) in ${file} pending: ${JSON.stringify(pending)}`);
