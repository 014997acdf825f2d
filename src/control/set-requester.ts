// The runner's check of who asked for a `ralph set`: the request file is agent-writable, so the process it
// names must be alive, really be `ralph set` of this run (this ralph's own CLI, not a holder such as
// `sh -c "sleep 8" set RUN`), and belong to no run's agent tree.
import { readlinkSync } from "node:fs";
import { basename, resolve } from "node:path";
import { isAlive, readEnvMarker, readProcess } from "../process/proc-table.js";
import { isRalphEntry } from "../process/ralph-entry.js";
import { commandLine, insideRunReason } from "./inside-run.js";
import type { SetRequest } from "./set-request.js";

/** Why the request must not be applied to run `runId` (runner `runnerPid`, agent marker `marker`), or null to apply it. */
export function setRequesterRefusal(
  request: SetRequest,
  runId: string,
  runnerPid: number,
  marker: { key: string; value: string },
): string | null {
  const info = readProcess(request.pid);
  if (!isAlive(info) || info?.startTime !== request.pid_start) return "the requesting process is gone";
  // Off Linux there is no /proc to tell: trusted as before.
  if (process.platform !== "linux") return null;
  if (!isRalphSet(request.pid, runId)) return "refused: the requesting process is not ralph set for this run";
  if (readEnvMarker(request.pid, marker.key, marker.value) === "yes" || descendsFrom(request.pid, runnerPid))
    return "refused: the request comes from this run's agent";
  const inside = insideRunReason(request.pid);
  return inside === null ? null : `refused: the request comes from a run's agent (${inside})`;
}

/** Whether `pid` is node running this ralph's own CLI as `set RUN …` (or `set k=v …`). */
function isRalphSet(pid: number, runId: string): boolean {
  const argv = commandLine(pid);
  // `ralph set RUN k=v`, or `ralph set k=v` naming no run (then the single active one: this one).
  if (argv === null || argv[2] !== "set" || (argv[3] !== runId && argv[3]?.includes("=") !== true)) return false;
  try {
    if (!basename(readlinkSync(`/proc/${pid}/exe`)).startsWith("node")) return false;
    return isRalphEntry(resolve(readlinkSync(`/proc/${pid}/cwd`), argv[1] ?? ""));
  } catch {
    return false;
  }
}

/** Whether `pid` is a descendant of `ancestor` (by parentage, as far as it can be followed). */
function descendsFrom(pid: number, ancestor: number): boolean {
  let current = readProcess(pid);
  for (let depth = 0; current && depth < 256; depth++) {
    if (current.ppid === ancestor) return true;
    if (current.ppid <= 1) return false;
    current = readProcess(current.ppid);
  }
  return false;
}
