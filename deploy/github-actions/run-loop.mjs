#!/usr/bin/env node
// The action's loop step: `ralph run --task-index N --worktree` with the action's inputs, then the run's
// outcome as step outputs (exit_reason, exit_code, branch, cost_usd, spend, run_id, run_dir, error). It never
// fails the step itself: the action's last step does, after the summary and the artifact.
// `spend` is the run's line of `ralph spend --json --by run` (cost, its source, calls, tokens by kind), also
// kept as spend.json in the run directory's artifact: the jobs of a matrix add up key by key.
import { spawnSync } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join, resolve } from "node:path";

const input = (name) => (process.env[`INPUT_${name}`] ?? "").trim();
const args = ["run", "--tasks", input("TASKS"), "--task-index", input("TASK_INDEX"), "--worktree"];
const optional = [
  ["--agent", "AGENT"],
  ["--prompt-file", "PROMPT_FILE"],
  ["--max-iterations", "MAX_ITERATIONS"],
  ["--max-cost", "MAX_COST"],
  ["--grace", "GRACE"],
];
for (const [flag, name] of optional) if (input(name) !== "") args.push(flag, input(name));
// One argument per line, taken as it is: no shell splits or expands them.
for (const line of (process.env.INPUT_ARGS ?? "").split("\n")) if (line.trim() !== "") args.push(line.trim());

// ralph commits each iteration on its branch; a runner has no git identity of its own.
const identity = {
  GIT_AUTHOR_NAME: input("GIT_USER_NAME"),
  GIT_AUTHOR_EMAIL: input("GIT_USER_EMAIL"),
  GIT_COMMITTER_NAME: input("GIT_USER_NAME"),
  GIT_COMMITTER_EMAIL: input("GIT_USER_EMAIL"),
};
const env = { ...process.env };
for (const [name, value] of Object.entries(identity)) if (!env[name] && value !== "") env[name] = value;

const loop = spawnSync("ralph", args, {
  env,
  stdio: ["ignore", "inherit", "pipe"],
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024,
});
process.stderr.write(loop.stderr ?? "");
const exitCode = loop.status ?? (loop.signal ? 128 + (constants.signals[loop.signal] ?? 0) : 1);

const outputs = {
  exit_code: String(exitCode),
  exit_reason: "",
  branch: "",
  cost_usd: "",
  spend: "",
  run_id: "",
  run_dir: "",
  error: "",
};
const status = spawnSync("ralph", ["status", "--json"], { env, encoding: "utf8" });
if (status.status === 0 && loop.status !== 2) {
  const run = JSON.parse(status.stdout);
  outputs.run_id = String(run.id ?? "");
  outputs.exit_reason = String(run.exit_reason ?? "");
  outputs.branch = String(run.branch ?? "");
  // Empty when the agent reported no cost (never a made-up 0).
  outputs.cost_usd = run.cost_usd === null || run.cost_usd === undefined ? "" : String(run.cost_usd);
  outputs.run_dir = typeof run.run_dir === "string" ? resolve(run.run_dir) : "";
  // What the run spent, from ralph's spend ledger (a runner's ledger may hold other jobs' runs: this run's line).
  const spend = spawnSync("ralph", ["spend", "--json", "--by", "run", "--since", "52w"], { env, encoding: "utf8" });
  const line =
    spend.status === 0 ? JSON.parse(spend.stdout).groups?.find((group) => group.key === outputs.run_id) : undefined;
  if (line) {
    outputs.spend = JSON.stringify({
      run: outputs.run_id,
      cost_usd: line.cost_usd,
      cost_source: line.cost_source,
      calls: line.calls,
      tokens: line.tokens,
    });
    if (outputs.run_dir !== "") writeFileSync(join(outputs.run_dir, "spend.json"), `${outputs.spend}\n`);
  }
} else {
  // Nothing was started (a usage error): the error line is the outcome.
  outputs.error = (loop.stderr ?? "").trim().split("\n").at(-1) ?? "";
}
const file = process.env.GITHUB_OUTPUT;
if (file)
  appendFileSync(
    file,
    Object.entries(outputs)
      .map(([key, value]) => `${key}=${value.replace(/[\r\n]+/g, " ")}\n`)
      .join(""),
  );
console.log(
  `ralph ended ${outputs.exit_reason || "before starting"} (exit ${exitCode})${outputs.branch ? ` on ${outputs.branch}` : ""}`,
);
