// What a new run's record keeps from before any agent ran: the project's remotes (where `land --push NAME`
// pushes) and the scripts the person's commands run (a review command's, a notification command's), pinned.
// `ralph continue` reads them there and never takes again what an agent may have rewritten since.
import { readLedgerEntry, type LedgerEntry } from "../control/run-ledger.js";
import { reviewsOf } from "../engine/reviewing.js";
import { leadingWords, pinTable, type PinTable } from "../store/pinned-program.js";
import { commandDir } from "../notify/notifier.js";
import { runPaths } from "../store/run-paths.js";
import { remoteUrls } from "../worktree/land-branch.js";
import { committedDigest } from "../worktree/committed-digest.js";
import { placeInRepository, repositoryOf } from "../worktree/worktree-location.js";
import type { StartRunInput } from "./start-run-input.js";
import type { WorkPlace } from "./run-worktree.js";

/**
 * The facts of new run `input`, working in `place`. A `--parallel` child takes its parent's: by the time it
 * starts, agents of its siblings have run (and its work tree holds the work merged before it). A run that goes
 * on from a task branch found again pins its reviewer scripts as the person's commit has them, not as the
 * branch does (an earlier agent committed there).
 */
export async function creationFacts(
  input: Pick<StartRunInput, "projectDir" | "settings" | "plan">,
  place: Pick<WorkPlace, "dir" | "personCommit">,
): Promise<Pick<LedgerEntry, "remotes" | "pins">> {
  const workDir = place.dir;
  if (input.settings.parent !== null) {
    const parent = readLedgerEntry(runPaths(input.projectDir, input.settings.parent).dir);
    if (parent?.pins) return { remotes: parent.remotes ?? {}, pins: parent.pins };
  }
  const reviews = reviewsOf(input.plan.completionCriteria).flatMap((criterion) =>
    criterion.review?.command ? [criterion.review.command] : [],
  );
  const notify: PinTable = {};
  for (const target of input.settings.notifyTargets) {
    if (target.kind === "command")
      Object.assign(
        notify,
        pinTable([leadingWords(target.command)], commandDir(input.projectDir, target), input.projectDir),
      );
  }
  const review = pinTable(reviews, workDir, workDir);
  if (place.personCommit !== undefined) await pinFromCommit(review, input.projectDir, place.personCommit);
  return { remotes: await remoteUrls(input.projectDir), pins: { review, notify } };
}

/** Replaces each digest of `table` (keys relative to the project's place in the repository) by the one in `commit`. */
async function pinFromCommit(table: PinTable, projectDir: string, commit: string): Promise<void> {
  const repo = await repositoryOf(projectDir);
  const prefix = "error" in repo ? "" : placeInRepository(repo.top, projectDir);
  for (const key of Object.keys(table))
    table[key] = await committedDigest(projectDir, commit, prefix === "" ? key : `${prefix}/${key}`);
}
