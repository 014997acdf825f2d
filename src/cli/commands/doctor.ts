// `ralph doctor`: how agent trees would be supervised here and why, the agent CLIs found, Node's version, orphaned worktrees.
import { versionOf } from "../../launch/version-of.js";
import { CLAUDE_BIN_VARIABLE } from "../../agents/claude.js";
import { CODEX_BIN_VARIABLE } from "../../agents/codex.js";
import { GEMINI_BIN_VARIABLE } from "../../agents/gemini.js";
import { OPENCODE_BIN_VARIABLE } from "../../agents/opencode.js";
import { readProcess } from "../../process/proc-table.js";
import { runIds } from "../../control/list-runs.js";
import { findOrphanWorktrees } from "../../worktree/orphan-worktrees.js";
import { renderOrphans } from "../render-worktree.js";
import { probeSandbox } from "../../sandbox/sandbox-probe.js";
import { findOnPath, Supervision, SUPERVISION_ENV, type SupervisionReport } from "../../process/supervision.js";
import { join } from "node:path";
import { runOption } from "../../config/run-options.js";
import { loadRalphYaml } from "../../config/ralph-yaml.js";
import { installHint } from "../../agents/install-hints.js";

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

async function checkAgent([agent, variable, fallback]: [string, string, string]): Promise<AgentCheck> {
  const given = process.env[variable] || fallback;
  const path = given.includes("/") ? given : findOnPath(given);
  if (path === null)
    return { agent, path: null, version: null, error: `not found (${fallback} on PATH, or ${variable})` };
  return { agent, path, ...(await versionOf(path)) };
}

/** What doctor found, or the error text of a supervision that cannot be had (a forced mode). */
async function supervisionCheck(): Promise<SupervisionReport | string> {
  const chosen = await Supervision.choose({
    env: process.env,
    pid: process.pid,
    pidStart: readProcess(process.pid)?.startTime ?? null,
    caps: { memoryMaxBytes: null, pidsMax: null },
  });
  if (typeof chosen === "string") return chosen;
  chosen.dispose();
  return chosen.report;
}

/** The agent this project asks for (RALPH_AGENT, else ralph.yaml's `agent:`), where it is asked for, or null. */
function configuredAgent(projectDir: string): { agent: string; where: string } | null {
  const { env, yaml: key } = runOption("agent");
  const fromEnv = env === null ? undefined : process.env[env];
  if (fromEnv) return { agent: fromEnv, where: `the environment variable ${env}` };
  const yaml = loadRalphYaml(join(projectDir, "ralph.yaml"));
  const entry = yaml.ok && key !== null ? yaml.defaults.values.get(key) : undefined;
  if (!yaml.ok || entry === undefined || typeof entry.value !== "string") return null;
  return { agent: entry.value, where: `${yaml.defaults.file} (line ${entry.line})` };
}

/** Prints the diagnosis; exit code 0 (1 when a forced supervision mode is unavailable, or the configured agent CLI is missing). */
export async function doctorCommand(projectDir: string, json: boolean): Promise<number> {
  const [supervision, agents, worktrees] = await Promise.all([
    supervisionCheck(),
    Promise.all(AGENTS.map(checkAgent)),
    findOrphanWorktrees(projectDir, runIds(projectDir)),
  ]);
  const node = { version: process.version, platform: process.platform, arch: process.arch };
  const probed = probeSandbox(process.env);
  const sandbox = probed.ok
    ? { ok: true, bwrap: probed.bwrap, version: probed.version }
    : { ok: false, why: probed.why };
  const configured = configuredAgent(projectDir);
  const missing = configured
    ? agents.find((agent) => agent.agent === configured.agent && agent.path === null)
    : undefined;
  const code = typeof supervision === "string" || missing !== undefined ? 1 : 0;
  if (json) {
    const report =
      typeof supervision === "string" ? { mode: null, why: supervision, tried: [], controllers: {} } : supervision;
    const asked = configured
      ? { agent: configured.agent, where: configured.where, found: missing === undefined }
      : null;
    process.stdout.write(
      `${JSON.stringify({ schema_version: 1, supervision: report, sandbox, agents, configured_agent: asked, node, orphaned_worktrees: worktrees })}\n`,
    );
    return code;
  }
  const lines: string[] = [];
  if (typeof supervision === "string") lines.push(`supervision  unavailable: ${supervision}`);
  else {
    lines.push(`supervision  ${supervision.mode}: ${supervision.why}`);
    for (const tried of supervision.tried) lines.push(`  tried      ${tried}`);
    for (const [name, source] of Object.entries(supervision.controllers)) lines.push(`  ${name.padEnd(10)} ${source}`);
    lines.push(`  (set ${SUPERVISION_ENV}=cgroup, subreaper or tree to force a mode)`);
  }
  lines.push(
    `sandbox      ${probed.ok ? `works: ${probed.version} at ${probed.bwrap} (--sandbox)` : `unavailable: ${probed.why}`}`,
  );
  for (const agent of agents)
    lines.push(
      `${agent.agent.padEnd(12)} ${agent.path === null ? agent.error : `${agent.path} ${agent.version ?? `(no version: ${agent.error ?? "?"})`}`}`,
    );
  lines.push(`node         ${node.version} (${node.platform} ${node.arch})`);
  lines.push(...renderOrphans(worktrees));
  if (configured && missing)
    lines.push(
      `PROBLEM      ${configured.where} asks for agent ${configured.agent}, which is not installed here: ${installHint(configured.agent)}`,
    );
  else if (configured) lines.push(`agent        ${configured.agent}, as ${configured.where} asks`);
  process.stdout.write(`${lines.join("\n")}\n`);
  return code;
}
