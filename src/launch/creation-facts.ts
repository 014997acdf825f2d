// What a new run's record keeps from before any agent ran: the project's remotes (where `land --push NAME`
// pushes) and the scripts the person's commands run (a review command's, a notification command's), pinned.
// `ralph continue` reads them there and never takes again what an agent may have rewritten since.
import { readLedgerEntry, type LedgerEntry } from "../control/run-ledger.js";
import { reviewsOf } from "../engine/reviewing.js";
import { leadingWords, pinTable, type PinTable } from "../store/pinned-program.js";
import { commandDir } from "../notify/notifier.js";
import { runPaths } from "../store/run-paths.js";
import { remoteUrls } from "../worktree/land-branch.js";
import type { StartRunInput } from "./start-run-input.js";

/**
 * The facts of new run `input`, whose work tree is `workDir`. A `--parallel` child takes its parent's: by the
 * time it starts, agents of its siblings have run (and its work tree holds the work merged before it).
 */
export async function creationFacts(input: Pick<StartRunInput, "projectDir" | "settings" | "plan">, workDir: string): Promise<Pick<LedgerEntry, "remotes" | "pins">> {
  if (input.settings.parent !== null) {
    const parent = readLedgerEntry(runPaths(input.projectDir, input.settings.parent).dir);
    if (parent?.pins) return { remotes: parent.remotes ?? {}, pins: parent.pins };
  }
  const reviews = reviewsOf(input.plan.completionCriteria).flatMap((criterion) => (criterion.review?.command ? [criterion.review.command] : []));
  const notify: PinTable = {};
  for (const target of input.settings.notifyTargets) {
    if (target.kind === "command") Object.assign(notify, pinTable([leadingWords(target.command)], commandDir(input.projectDir, target), input.projectDir));
  }
  return { remotes: await remoteUrls(input.projectDir), pins: { review: pinTable(reviews, workDir, workDir), notify } };
}
