// Keeps state.md the person's: a change written while an agent iteration runs never loosens the rules.
//
// The runner remembers the bytes of state.md it last accepted ("trusted"). After each agent iteration it
// compares the file with them: a difference was written while the agent ran (the agent, or its tools),
// so only tightenings of it are applied (see tightenOnly) and state.md is put back. A difference first
// seen at a boundary, with no agent running (between iterations, while paused), is a person's edit and is
// applied in full. `ralph set` changes go through the runner (set-request.ts) and are trusted at once.
import { writeFileAtomic } from "./atomic-write.js";
import { parsePlan, readPlanBytes, renderPlan, type Plan } from "./plan-file.js";

/** What happened to a change of state.md written during an iteration. */
export interface RejectedChange {
  /** Tightenings that were applied, e.g. "active: false", "max_iterations 5 -> 2". */
  applied: string[];
  /** Fields whose change was not applied, e.g. "completion_criteria", "max_iterations 2 -> 0". */
  ignored: string[];
  /** Where the rejected text was kept. */
  keptAs: string;
}

/** What a boundary found in state.md. */
export type BoundaryRead = { kind: "same" } | { kind: "changed"; state: Plan } | { kind: "broken"; message: string };

/** The rules every guarded loop file shares: whether it is active, and its iteration cap (0: none). */
export interface LoopRules {
  active: boolean;
  maxIterations: number;
}

/**
 * The tightenings of `active` and the cap in `proposed`, written into a copy of `trusted`: active false, a
 * lower non-zero cap. Each change is named in `applied` or `ignored`. The one rule for state.md and hook mode's loop file.
 */
export function tightenRules<T extends LoopRules>(
  trusted: T,
  proposed: T,
): { rules: T; applied: string[]; ignored: string[] } {
  const rules = { ...trusted };
  const applied: string[] = [];
  const ignored: string[] = [];
  if (proposed.active !== trusted.active) {
    if (!proposed.active) {
      rules.active = false;
      applied.push("active: false");
    } else ignored.push("active: true");
  }
  const [from, to] = [trusted.maxIterations, proposed.maxIterations];
  if (to !== from) {
    const tighter = to > 0 && (from === 0 || to < from);
    if (tighter) rules.maxIterations = to;
    (tighter ? applied : ignored).push(`max_iterations ${from} -> ${to}`);
  }
  return { rules, applied, ignored };
}

/** The parts of `proposed` that only tighten `trusted`: active false, a lower non-zero cap. The rest is kept from `trusted`. */
export function tightenOnly(trusted: Plan, proposed: Plan): { state: Plan; applied: string[]; ignored: string[] } {
  const { rules: state, applied, ignored } = tightenRules(trusted, proposed);
  if (proposed.completionPromise !== trusted.completionPromise) ignored.push("completion_promise");
  if (JSON.stringify(proposed.completionCriteria) !== JSON.stringify(trusted.completionCriteria))
    ignored.push("completion_criteria");
  if (proposed.tasks !== trusted.tasks) ignored.push("tasks");
  if (!proposed.prompt.equals(trusted.prompt)) ignored.push("prompt");
  return { state, applied, ignored };
}

/** The runner's view of state.md: the last accepted state and the bytes it was read from or written as. */
export class StateGuard {
  /** Kept whole (a small file) and compared byte for byte: cheaper than a hash of each read. */
  private trustedBytes: Buffer;
  /** A broken file a boundary already saw (and reported): not a change made during the next iteration. */
  private brokenBytes: Buffer | null = null;

  constructor(
    private readonly file: string,
    private trustedState: Plan,
  ) {
    const read = readPlanBytes(file);
    this.trustedBytes = read.ok ? read.bytes : renderPlan(trustedState);
  }

  /** The state in force. */
  get state(): Plan {
    return this.trustedState;
  }

  /** Replaces state.md with `state` as the runner's own (trusted) write: `ralph set`, or a put-back. */
  write(state: Plan): void {
    const text = renderPlan(state);
    writeFileAtomic(this.file, text);
    this.trustedState = state;
    this.trustedBytes = text;
    this.brokenBytes = null;
  }

  /**
   * Right after an agent iteration: a change found now was written while the agent ran. Its tightenings
   * are applied, the rest is not; state.md is rewritten to what is in force and the change kept beside it.
   */
  afterIteration(iteration: number): RejectedChange | null {
    const read = readPlanBytes(this.file);
    if (read.ok && (read.bytes.equals(this.trustedBytes) || this.brokenBytes?.equals(read.bytes) === true)) return null;
    const keptAs = `${this.file}.rejected-${String(iteration).padStart(3, "0")}`;
    let outcome: { state: Plan; applied: string[]; ignored: string[] };
    if (read.ok) {
      writeFileAtomic(keptAs, read.bytes);
      const parsed = parsePlan(this.file, read.bytes);
      outcome = parsed.ok
        ? tightenOnly(this.trustedState, parsed.plan)
        : { state: this.trustedState, applied: [], ignored: [parsed.message] };
    } else {
      outcome = { state: this.trustedState, applied: [], ignored: [read.message] };
    }
    this.write(outcome.state);
    return { applied: outcome.applied, ignored: outcome.ignored, keptAs };
  }

  /** At a boundary with no agent running: a change is a person's edit and is accepted when it parses. */
  atBoundary(): BoundaryRead {
    const read = readPlanBytes(this.file);
    if (!read.ok) return { kind: "broken", message: read.message };
    if (read.bytes.equals(this.trustedBytes)) return { kind: "same" };
    const parsed = parsePlan(this.file, read.bytes);
    if (!parsed.ok) {
      this.brokenBytes = read.bytes;
      return { kind: "broken", message: parsed.message };
    }
    this.brokenBytes = null;
    this.trustedState = parsed.plan;
    this.trustedBytes = read.bytes;
    return { kind: "changed", state: parsed.plan };
  }
}
