// Runs one agent process to its end: output logged and parsed, timeouts and stop requests enforced,
// and the whole process tree ended afterwards so nothing leaks into the next iteration.
import type { AgentAdapter, AgentEvent, Invocation } from "../agents/types.js";
import type { EndTreeReport } from "../process/kill-tree.js";
import type { SpawnAgentOptions, SpawnResult } from "../process/spawn-agent.js";
import type { TreeMarker } from "../process/inventory.js";
import type { IterationLog } from "../store/iteration-log.js";
import { TextTail } from "../util/text-tail.js";
import { LineSplitter } from "./line-splitter.js";
import type { AgentRun, EndedBy } from "./phase.js";

/** Everything startAgent needs for one iteration. */
export interface AgentRunInput {
  adapter: AgentAdapter;
  invocation: Invocation;
  prompt: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  marker: TreeMarker;
  /** Where the raw output goes (iter-NNN.log). */
  log: IterationLog;
  timeoutMs: number;
  idleTimeoutMs: number | null;
  /** How long the agent may keep running after its final result before its tree is ended. */
  lingerMs: number;
  /** Told when the agent is ended for lingering after its result. */
  onLingered?: () => void;
  graceMs: number;
  /** Aborted on a second signal: skip the grace. */
  urgent: AbortSignal;
  onEvent: (event: AgentEvent) => void;
  /** Told the size of every chunk of output. */
  onOutput?: (bytes: number) => void;
  spawnAgent: (options: SpawnAgentOptions) => Promise<SpawnResult>;
  now: () => number;
}

const STDERR_TAIL_BYTES = 8 * 1024;

/** A running agent: `end` ends its tree (once; later calls are ignored), `done` settles when it is gone. */
export interface AgentHandle {
  end(why: EndedBy): void;
  done: Promise<AgentRun>;
}

/** Starts the agent; its whole tree is always ended before `done` settles. */
export function startAgent(input: AgentRunInput): AgentHandle {
  let requested: EndedBy | null = null;
  let endNow: ((why: EndedBy) => void) | null = null;
  const done = runAgent(input, (end) => {
    endNow = end;
    if (requested) end(requested);
  });
  return {
    end(why) {
      requested ??= why;
      endNow?.(why);
    },
    done,
  };
}

async function runAgent(input: AgentRunInput, ready: (end: (why: EndedBy) => void) => void): Promise<AgentRun> {
  const started = input.now();
  const spawned = await input.spawnAgent({
    argv: input.invocation.argv,
    cwd: input.cwd,
    env: input.env,
    stdin: input.invocation.stdin,
    marker: input.marker,
  });
  if (!spawned.ok) return { kind: "missing", message: spawned.message };
  const agent = spawned.agent;
  const log = input.log;
  const parser = input.adapter.parser({ prompt: input.prompt });
  // In a ring: a slice of the joined text would keep each chunk's whole text alive until the next one.
  const stderrTail = new TextTail(STDERR_TAIL_BYTES);
  let endedBy: EndedBy | null = null;
  let idleTimer: NodeJS.Timeout | null = null;
  let ending: Promise<EndTreeReport> | null = null;
  // The gap lets an agent that saves state on SIGINT (Claude Code prints its result) finish before SIGTERM.
  const endOptions = () => ({
    graceMs: input.graceMs,
    politeSignals: input.adapter.politeSignals,
    politeGapMs: 300,
    skipGrace: input.urgent,
  });
  const endNow = (why: EndedBy) => {
    if (endedBy) return;
    endedBy = why;
    ending = agent.end(endOptions());
  };
  let exited = false;
  let lingerTimer: NodeJS.Timeout | null = null;
  // Some agents print their final result and then never exit (a hung MCP server, a tool process holding them).
  const armLinger = () => {
    lingerTimer ??= setTimeout(() => {
      if (exited || endedBy) return;
      input.onLingered?.();
      endNow("lingered");
    }, input.lingerMs);
  };
  const armIdle = () => {
    if (input.idleTimeoutMs === null) return;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => endNow("idle_timeout"), input.idleTimeoutMs);
  };

  const writeLog = (source: NodeJS.ReadableStream, chunk: Buffer) => {
    input.onOutput?.(chunk.length);
    log.write(source, chunk, source === agent.stderr);
  };

  const splitter = new LineSplitter((line) => {
    log.lineEnded(false);
    let events: AgentEvent[];
    try {
      events = parser.line(line);
    } catch {
      // A parser must skip what it cannot read; one that throws loses only this line.
      events = [];
    }
    for (const event of events) {
      input.onEvent(event);
      // The agent reported an error no retry can fix: end it now rather than wait out its own retries.
      if (event.fatal) endNow("agent_error");
      if (event.kind === "result") armLinger();
    }
  });
  // The agent's stderr, line by line, among its other events in the order written.
  const stderrLines = new LineSplitter((line) => {
    log.lineEnded(true);
    input.onEvent({ kind: "stderr", text: line });
  });
  const stdoutDone = new Promise<void>((resolve) => {
    agent.stdout.on("data", (chunk: Buffer) => {
      armIdle();
      writeLog(agent.stdout, chunk);
      splitter.push(chunk);
    });
    agent.stdout.on("end", resolve);
    agent.stdout.on("error", () => resolve());
  });
  const stderrDone = new Promise<void>((resolve) => {
    agent.stderr.on("data", (chunk: Buffer) => {
      armIdle();
      writeLog(agent.stderr, chunk);
      stderrTail.append(chunk.toString("utf8"));
      stderrLines.push(chunk);
    });
    agent.stderr.on("end", resolve);
    agent.stderr.on("error", () => resolve());
  });

  const timeout = setTimeout(() => endNow("timeout"), input.timeoutMs);
  armIdle();
  void agent.memoryCapHit.then(() => endNow("memory_cap"));
  ready(endNow);
  try {
    const exit = await agent.exited;
    exited = true;
    // Leftovers (dev servers, daemons, tool processes in their own sessions) are ended after every exit.
    // An ending already started by a timeout, signal or stop --now covers them (it re-scans for the
    // run's marker until nothing is left), and must be over before the next iteration's agent starts.
    const report = await (ending ?? agent.end(endOptions()));
    // Every writer of the pipes is gone now; still, never wait on them forever.
    await Promise.race([Promise.all([stdoutDone, stderrDone]), delay(1000)]);
    splitter.end();
    stderrLines.end();
    await log.end();
    const stderr = stderrTail.text();
    const outcome = parser.finish(stderr, exit);
    const resources = agent.resources();
    return {
      kind: "finished",
      exit,
      outcome,
      endedBy,
      durationMs: input.now() - started,
      leftovers: report.found,
      resources,
      stderrTail: stderr,
    };
  } finally {
    clearTimeout(timeout);
    if (idleTimer) clearTimeout(idleTimer);
    if (lingerTimer) clearTimeout(lingerTimer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
