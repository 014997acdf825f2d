// The runner's side of `ralph set`: validate each pending request, apply it to state.md as trusted, answer it.
import { applyStateChanges, describeStateChanges, parseStateChanges } from "../config/state-changes.js";
import { answerSetRequest, pendingSetRequests, type SetRequest } from "./set-request.js";
import type { StateGuard } from "../store/state-guard.js";

/** One request handled: its changes as text when applied, or why it was refused. */
export type ServedRequest = { ok: true; applied: string } | { ok: false; message: string };

/**
 * Applies the pending requests of requests directory `dir` in order. `refuse` names why a requester is not
 * trusted (e.g. it is a process of this run's agent), or returns null.
 */
export function serveSetRequests(
  dir: string,
  guard: StateGuard,
  refuse: (request: SetRequest) => string | null,
): ServedRequest[] {
  const served: ServedRequest[] = [];
  for (const { name, request } of pendingSetRequests(dir)) {
    let outcome: ServedRequest;
    if (!request) outcome = { ok: false, message: "unreadable request" };
    else {
      const refusal = refuse(request);
      const parsed = parseStateChanges(request.words);
      if (refusal) outcome = { ok: false, message: refusal };
      else if (!parsed.ok) outcome = { ok: false, message: parsed.message };
      else {
        guard.write(applyStateChanges(guard.state, parsed.changes));
        outcome = { ok: true, applied: describeStateChanges(parsed.changes) };
      }
    }
    answerSetRequest(dir, name, outcome.ok ? { ok: true, message: `applied ${outcome.applied}` } : outcome);
    served.push(outcome);
  }
  return served;
}
