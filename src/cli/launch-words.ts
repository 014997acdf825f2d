// How a launched run is shown and its failures said: the words the launch layer is given (launch/launch-words.ts).
import type { LaunchWords } from "../launch/launch-words.js";
import { sayFailure } from "./failure-exit.js";
import { createRenderer, summaryLines } from "./render.js";
import { renderWorktreeFailure } from "./render-worktree.js";
import { startLines } from "./start-lines.js";

export const launchWords: LaunchWords = {
  view: (input, out) =>
    createRenderer(
      { json: input.settings.json, live: input.settings.live, maxIterations: input.plan.maxIterations },
      out,
    ),
  startLines: (input, worktree) => startLines({ ...input, worktree }),
  endLines(input, result, view, worktree, spend, refused) {
    const parallel = input.settings.parallel !== null;
    const shown = {
      temporary: input.temporary === true,
      agent: input.settings.agent,
      dryRun: input.settings.dryRun,
      spend,
      maxIterations: input.plan.maxIterations,
      parallel,
    };
    const review = input.temporary
      ? []
      : worktree
        ? [
            `branch ${worktree.branch} (worktree ${worktree.path}): review with git log -p HEAD..${worktree.branch}; merging it is your decision`,
            `report: ralph report ${input.runId}; merge it into your branch: ralph land ${input.runId} (--push REMOTE, --pr)`,
          ]
        : [`report: ralph report ${input.runId}`];
    return [...summaryLines(result, shown), ...refused, ...review, ...(input.epilogue?.(result) ?? [])];
  },
  failure: (error) => sayFailure(error, false),
  worktreeFailure: renderWorktreeFailure,
};
