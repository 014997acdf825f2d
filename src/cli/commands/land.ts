// `ralph land RUN`: delivers a run's branch only as asked: merged into the person's current branch, or pushed
// to a remote (`--push REMOTE[:BRANCH]`), with a pull request (`--pr`, through gh). Nothing happens unasked.
import { isRunnerAlive } from "../../control/runner-alive.js";
import { summariseRun } from "../../control/list-runs.js";
import { readReport } from "../../report/read-report.js";
import type { RunReport } from "../../report/report-schema.js";
import { branchExists, currentBranch } from "../../worktree/worktree-location.js";
import { mergeIntoCheckout, pushBranch, trackedChanges } from "../../worktree/land-branch.js";
import { pickRun } from "../pick-run.js";
import { readLedgerEntry } from "../../control/run-ledger.js";
import { runPaths } from "../../store/run-paths.js";
import { renderReportMarkdown } from "../render-report.js";
import { UsageError } from "../usage-error.js";
import { findOnPath } from "../../process/supervision.js";
import { runGh } from "../../launch/run-gh.js";

/** What `ralph land` was asked to do. */
export interface LandOptions {
  push?: string;
  pr?: boolean;
  force?: boolean;
}

/** Where --push pushes: a remote the run recorded by name, or a URL as given; and the branch there. */
interface PushTarget {
  remote: string;
  /** `remote` is a URL (it has a `/` or an `@`: its colons are its own, never a `:BRANCH`). */
  isUrl: boolean;
  destination: string;
}

/** `REMOTE[:BRANCH]` of --push, checked: never a word git would read as an option. */
function parsePush(value: string, branch: string): PushTarget {
  const isUrl = value.includes("/") || value.includes("@");
  // Only a plain remote name takes `:BRANCH`.
  const at = isUrl ? -1 : value.lastIndexOf(":");
  const remote = at > 0 ? value.slice(0, at) : value;
  const destination = at > 0 ? value.slice(at + 1) : branch;
  if (remote === "" || remote.startsWith("-"))
    throw new UsageError(`--push: expected a remote name or URL, got ${JSON.stringify(value)}`);
  if (destination === "" || destination.startsWith("-"))
    throw new UsageError(`--push: expected REMOTE or REMOTE:BRANCH, got ${JSON.stringify(value)}`);
  return { remote, isUrl, destination };
}

/** What the run's last judged iteration says of it: its checks and its review, in a few words. */
function landingFacts(report: RunReport | null): string {
  const judged = [...(report?.iterations ?? [])]
    .reverse()
    .find((iteration) => iteration.checks.length > 0 || iteration.reviews.length > 0);
  const checks = judged?.checks ?? [];
  const reviews = judged?.reviews ?? [];
  const checkText =
    checks.length === 0
      ? "no checks"
      : `checks ${checks.filter((check) => check.passed).length}/${checks.length} passed`;
  const reviewText =
    reviews.length === 0
      ? "no review"
      : reviews.every((review) => review.passed)
        ? "review approved"
        : "review not approved";
  return `${checkText} · ${reviewText}`;
}

/**
 * The URL `--push` pushes to: a URL as given, or the URL remote REMOTE had when the run started (from the
 * runner's record, out of the agent's reach), never what the repository's config says now.
 */
function pushUrl(projectDir: string, id: string, target: PushTarget): string {
  if (target.isUrl) return target.remote;
  const url = readLedgerEntry(runPaths(projectDir, id).dir)?.remotes?.[target.remote];
  if (url === undefined)
    throw new UsageError(
      `--push ${target.remote}: run ${id} recorded no remote ${target.remote} when it started; give the remote's URL instead`,
    );
  return url;
}

/** The line that says what is being landed, before anything is. */
function landingLine(id: string, outcome: string | null, report: RunReport | null): string {
  return `landing run ${id}: ${outcome ?? "not ended"} · ${landingFacts(report)}\n`;
}

/** Lands run RUN as asked; exit 0 when done, 2 when refused, 1 when git or gh failed. */
export async function landCommand(
  projectDir: string,
  given: string | undefined,
  options: LandOptions,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const id = pickRun(projectDir, given, "land", true);
  const { summary, status } = summariseRun(projectDir, id, isRunnerAlive, new Date());
  if (summary.active)
    throw new UsageError(`run ${id} is live (pid ${summary.pid ?? "?"}); land it once it has ended (ralph stop ${id})`);
  const branch = status?.branch;
  if (!status || !branch)
    throw new UsageError(`run ${id} has no branch of its own (it ran in your checkout): there is nothing to land`);
  if (!(await branchExists(projectDir, branch)))
    throw new UsageError(`run ${id}: its branch ${branch} no longer exists`);
  if (options.pr && !options.push)
    throw new UsageError("--pr needs --push REMOTE: the pull request's branch must be on the remote first");
  const report = await readReport(projectDir, id);
  const outcome = report?.outcome ?? null;
  // Landing work that did not end in success is a choice the person makes knowingly, never by default. A run
  // that finished every task of its list (NO_WORK, as a --parallel parent whose children all merged) did.
  if (outcome !== "DONE" && outcome !== "NO_WORK" && !options.force)
    throw new UsageError(
      `run ${id} ended ${outcome ?? "without an outcome"}, not DONE (${landingFacts(report)}); give --force to land it anyway`,
    );
  const title = `ralph ${id}: ${report?.outcome ?? "not ended"}${report?.children.length ? ` (${report.children.filter((child) => child.merge === "merged").length} task(s) merged)` : ""}`;
  const base = status.base_branch ?? report?.base_branch ?? null;
  if (options.push) {
    const target = parsePush(options.push, branch);
    const { remote, destination } = target;
    const gh = options.pr ? findOnPath("gh", env.PATH ?? "") : null;
    if (options.pr && !gh)
      throw new UsageError(
        "--pr: gh is not installed (not found on PATH); push with --push alone and open the pull request yourself",
      );
    if (options.pr && !base)
      throw new UsageError(`--pr: run ${id} started on a detached HEAD: no branch to open the pull request against`);
    const url = pushUrl(projectDir, id, target);
    process.stdout.write(landingLine(id, outcome, report));
    const pushed = await pushBranch(projectDir, url, branch, destination, env);
    if (!pushed.ok) {
      process.stderr.write(`ralph: ${pushed.message}\n`);
      return 1;
    }
    process.stdout.write(`pushed ${branch} to ${remote}${url !== remote ? ` (${url})` : ""} as ${destination}\n`);
    if (!options.pr || !gh || !base) return 0;
    const opened = await runGh(
      gh,
      ["pr", "create", "--head", destination, "--base", base, "--title", title, "--body-file", "-"],
      report ? renderReportMarkdown(report) : `${title}\n`,
      url,
      env,
    );
    if (opened.code !== 0) {
      process.stderr.write(
        `ralph: gh pr create failed (${opened.code ?? "not started"}): ${opened.stderr.trim().split("\n")[0] ?? ""}\n`,
      );
      return 1;
    }
    process.stdout.write(`opened a pull request of ${destination} into ${base}: ${opened.stdout.trim()}\n`);
    return 0;
  }
  const here = await currentBranch(projectDir);
  const changes = await trackedChanges(projectDir);
  if (!changes.ok) throw new UsageError(changes.message);
  if (changes.changes.length > 0)
    throw new UsageError(
      `your checkout has uncommitted changes (${changes.changes.length} file(s), e.g. ${changes.changes[0]?.slice(3)}); commit or stash them first`,
    );
  if (here === null && !options.force)
    throw new UsageError(`you are on a detached HEAD; check out the branch to land ${branch} into (or give --force)`);
  if (base && here !== base && !options.force)
    throw new UsageError(
      `run ${id} started from ${base}, you are on ${here ?? "a detached HEAD"}; check out ${base}, or give --force to land it here`,
    );
  process.stdout.write(landingLine(id, outcome, report));
  const merged = await mergeIntoCheckout(projectDir, branch, `Merge ${branch} (${title})`);
  if (!merged.ok) {
    const conflicts =
      "conflicts" in merged && merged.conflicts.length > 0
        ? ` (conflicts in ${merged.conflicts.join(", ")})`
        : `: ${merged.message}`;
    process.stderr.write(
      `ralph: ${branch} does not merge into ${here ?? "HEAD"}${conflicts}; the merge was aborted, nothing changed\n`,
    );
    return 1;
  }
  process.stdout.write(`merged ${branch} into ${here ?? "HEAD"} (${merged.commit.slice(0, 12)})\n`);
  return 0;
}
