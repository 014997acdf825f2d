// The commands that act for the person (answer, set, stop, pause, resume, continue) refuse to run inside an agent.
import { insideRunRefusal } from "../control/inside-run.js";
import { UsageError } from "./usage-error.js";

/** Throws a UsageError when this process belongs to a ralph run's agent tree. */
export function forPeopleOnly(command: string, env: NodeJS.ProcessEnv = process.env): void {
  const refusal = insideRunRefusal(command, env);
  if (refusal !== null) throw new UsageError(refusal);
}
