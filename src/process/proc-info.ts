// One process as /proc (or ps) describes it.

/** One process as seen in the process table; (pid, startTime) is its identity. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  startTime: string;
  comm: string;
  /** A zombie's exit status as waitpid reports it (Linux 3.5+; absent elsewhere). */
  exitStatus?: number;
  /** Set when it is being killed: exiting (PF_EXITING), or SIGKILL pending while its state still reads as live (Linux). */
  dying?: true;
}
