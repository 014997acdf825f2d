// `budget:` in ralph.yaml (this project) and in the user's config (`$XDG_CONFIG_HOME/ralph/config.yaml`, every
// project): a daily and a weekly cap in US dollars, and what a run does once one is met.
//
//   budget:
//     daily: 20            # US dollars per UTC day
//     weekly: 100          # US dollars per UTC week (from Monday 00:00 UTC)
//     on_exhausted: stop   # stop (BUDGET_EXCEEDED) or wait (for the next day or week)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requireBuiltin } from "../util/require-builtin.js";
import { parseDocument } from "yaml";
import { parseUsd } from "../util/parse-value.js";
import type { Budget } from "./spend-record.js";

/** A budget, or the one line that says what is wrong with it. */
export type BudgetRead = { ok: true; budget: Budget | null } | { ok: false; message: string };

const KEYS = ["daily", "weekly", "on_exhausted"];

/** `value` (the `budget:` mapping) as a budget; `where` names it in a message (`ralph.yaml: budget`). */
export function parseBudget(value: unknown, where: string): BudgetRead {
  if (value === undefined || value === null) return { ok: true, budget: null };
  if (typeof value !== "object" || Array.isArray(value))
    return { ok: false, message: `${where}: expected a mapping with daily, weekly and on_exhausted` };
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields))
    if (!KEYS.includes(key))
      return { ok: false, message: `${where}: unknown key "${key}" (expected one of ${KEYS.join(", ")})` };
  const usd = (key: "daily" | "weekly"): number | null | string => {
    const raw = fields[key];
    if (raw === undefined || raw === null) return null;
    const parsed = parseUsd(raw);
    return parsed.ok ? parsed.value : `${where}.${key}: ${JSON.stringify(raw)}: expected ${parsed.expected}`;
  };
  const daily = usd("daily");
  if (typeof daily === "string") return { ok: false, message: daily };
  const weekly = usd("weekly");
  if (typeof weekly === "string") return { ok: false, message: weekly };
  const on = fields.on_exhausted ?? "stop";
  if (on !== "stop" && on !== "wait")
    return { ok: false, message: `${where}.on_exhausted: ${JSON.stringify(on)}: expected stop or wait` };
  if (daily === null && weekly === null) return { ok: true, budget: null };
  return { ok: true, budget: { daily_usd: daily, weekly_usd: weekly, on_exhausted: on } };
}

/** The user-level config file, from `env`. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  // Without HOME, the user's home directory as the system knows it (never a path relative to the working directory).
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/")
      ? env.XDG_CONFIG_HOME
      : join(env.HOME || (requireBuiltin("node:os") as typeof import("node:os")).homedir(), ".config");
  return join(base, "ralph", "config.yaml");
}

/** `budget:` of the YAML file `file` (none when the file does not exist); `only` lists the keys the file may have. */
export function readBudgetFile(file: string, only: readonly string[] | null): BudgetRead {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ok: true, budget: null };
    return { ok: false, message: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0)
    return { ok: false, message: `${file}: invalid YAML (${doc.errors[0]?.code.toLowerCase().replace(/_/g, " ")})` };
  const value = doc.toJSON() as unknown;
  if (value === null || value === undefined) return { ok: true, budget: null };
  if (typeof value !== "object" || Array.isArray(value)) return { ok: false, message: `${file}: expected a mapping` };
  if (only) {
    for (const key of Object.keys(value))
      if (!only.includes(key))
        return { ok: false, message: `${file}: unknown key "${key}" (expected one of ${only.join(", ")})` };
  }
  return parseBudget((value as Record<string, unknown>).budget, `${file}: budget`);
}

/** The project's budget (ralph.yaml) and the user's (their config), or the first problem with either. */
export function readBudgets(
  projectDir: string,
  env: NodeJS.ProcessEnv,
): { ok: true; project: Budget | null; user: Budget | null } | { ok: false; message: string } {
  const project = readBudgetFile(join(projectDir, "ralph.yaml"), null);
  if (!project.ok) return project;
  const user = readBudgetFile(userConfigFile(env), ["budget"]);
  if (!user.ok) return user;
  return { ok: true, project: project.budget, user: user.budget };
}
