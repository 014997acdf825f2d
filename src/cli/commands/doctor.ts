// `ralph doctor`: how agent trees would be supervised here and why, the agent CLIs found, Node's version, orphaned worktrees.
import { execFile } from "node:child_process";
import { CLAUDE_BIN_VARIABLE } from "../../agents/claude.js";
import { CODEX_BIN_VARIABLE } from "../../agents/codex.js";
import { GEMINI_BIN_VARIABLE } from "../../agents/gemini.js";
import { OPENCODE_BIN_VARIABLE } from "../../agents/opencode.js";
import { readProcess } from "../../process/proc-table.js";
import { runIds } from "../../control/list-runs.js";
import { findOrphanWorktrees } from "../../worktree/orphan-worktrees.js";
import { renderOrphans } from "../render-worktree.js";
import { findOnPath, Supervision, SUPERVISION_ENV, type SupervisionReport } from "../../process/supervision.js";

/** One agent CLI as found on this machine. */
interface AgentCheck {
  agent: string;
  path: string | null;
  version: string | null;
  error: string | null;
}

const AGENTS: Array<[string, string, string]> = [
  ["claude", CLAUDE_BIN_VARIABLE, "claude"],
  ["codex", CODEX_BIN_VARIABLE, "codex"],
  ["gemini", GEMINI_BIN_VARIABLE, "gemini"],
  ["opencode", OPENCODE_BIN_VARIABLE, "opencode"],
];

/** `<bin> --version`, first line, within 15 s. */
function versionOf(path: string): Promise<{ version: string | null; error: string | null }> {
  return new Promise((resolve) => {
    execFile(path, ["--version"], { timeout: 15_000, encoding: "utf8" }, (error, stdout) => {
      const first = stdout.trim().split("\n")[0]?.trim() ?? "";
      if (first !== "") resolve({ version: first, error: null });
      else resolve({ version: null, error: error ? error.message.split("\n")[0] ?? "failed" : "printed nothing" });
    });
  });
}

async function checkAgent([agent, variable, fallback]: [string, string, string]): Promise<AgentCheck> {
  const given = process.env[variable] || fallback;
  const path = given.includes("/") ? given : findOnPath(given);
  if (path === null) return { agent, path: null, version: null, error: `not found (${fallback} on PATH, or ${variable})` };
  return { agent, path, ...(await versionOf(path)) };
}

/** What doctor found, or the error text of a supervision that cannot be had (a forced mode). */
async function supervisionCheck(): Promise<SupervisionReport | string> {
  const chosen = await Supervision.choose({ env: process.env, pid: process.pid, pidStart: readProcess(process.pid)?.startTime ?? null, caps: { memoryMaxBytes: null, pidsMax: null } });
  if (typeof chosen === "string") return chosen;
  chosen.dispose();
  return chosen.report;
}

/** Prints the diagnosis; exit code 0 (1 when a forced supervision mode is unavailable). */
export async function doctorCommand(projectDir: string, json: boolean): Promise<number> {
  const [supervision, agents, worktrees] = await Promise.all([supervisionCheck(), Promise.all(AGENTS.map(checkAgent)), findOrphanWorktrees(projectDir, runIds(projectDir))]);
  const node = { version: process.version, platform: process.platform, arch: process.arch };
  if (json) {
    const report = typeof supervision === "string" ? { mode: null, why: supervision, tried: [], controllers: {} } : supervision;
    process.stdout.write(`${JSON.stringify({ schema_version: 1, supervision: report, agents, node, orphaned_worktrees: worktrees })}\n`);
    return typeof supervision === "string" ? 1 : 0;
  }
  const lines: string[] = [];
  if (typeof supervision === "string") lines.push(`supervision  unavailable: ${supervision}`);
  else {
    lines.push(`supervision  ${supervision.mode}: ${supervision.why}`);
    for (const tried of supervision.tried) lines.push(`  tried      ${tried}`);
    for (const [name, source] of Object.entries(supervision.controllers)) lines.push(`  ${name.padEnd(10)} ${source}`);
    lines.push(`  (set ${SUPERVISION_ENV}=cgroup, subreaper or tree to force a mode)`);
  }
  for (const agent of agents) lines.push(`${agent.agent.padEnd(12)} ${agent.path === null ? agent.error : `${agent.path} ${agent.version ?? `(no version: ${agent.error ?? "?"})`}`}`);
  lines.push(`node         ${node.version} (${node.platform} ${node.arch})`);
  lines.push(...renderOrphans(worktrees));
  process.stdout.write(`${lines.join("\n")}\n`);
  return typeof supervision === "string" ? 1 : 0;
}
