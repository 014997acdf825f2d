// Whether ralph runs as PID 1: a file of its own, so the CLI's quick start can ask without loading
// child_process (pid1.ts starts the reaper).

/** Whether this process is PID 1 (of a container or PID namespace) on Linux, where orphans must be reaped. */
export function isContainerInit(pid: number = process.pid, platform: NodeJS.Platform = process.platform): boolean {
  return pid === 1 && platform === "linux";
}
