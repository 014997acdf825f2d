// `--sandbox` at a run's start: can a sandbox be built here (else a usage error, or one warning for auto),
// and the lines that say what the agent is walled into and which credentials it will use.
import type { RunSettings } from "../config/run-options.js";
import { credentialsLine } from "../sandbox/billing.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { probeSandbox, type SandboxProbe } from "../sandbox/sandbox-probe.js";
import { refused } from "./launch-failure.js";

/** The probe when the run is sandboxed; null when it is not (off, or auto where no sandbox works: one warning line). */
export function probeRunSandbox(
  settings: RunSettings,
  env: NodeJS.ProcessEnv,
  warn: (line: string) => void = (line) => void process.stderr.write(line),
): Extract<SandboxProbe, { ok: true }> | null {
  const { mode } = settings.sandbox;
  if (mode === "off" || settings.dryRun) return null;
  const probe = probeSandbox(env);
  if (probe.ok) return probe;
  if (mode === "on") throw refused(`--sandbox: ${probe.why}`);
  warn(`ralph: warning: sandbox: auto, but ${probe.why}; the agent runs without a sandbox\n`);
  return null;
}

/** What the run says at its start about its sandbox and the agent's credentials. */
export function sandboxNotes(settings: RunSettings, sandbox: Sandbox | null, env: NodeJS.ProcessEnv): string[] {
  const credentials = credentialsLine(settings.agent, sandbox ? sandbox.environment(env) : env);
  return [
    ...(sandbox ? [sandbox.describe(), sandbox.describeEnvironment(env)] : []),
    ...(credentials === null ? [] : [credentials]),
  ];
}
