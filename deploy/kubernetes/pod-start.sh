#!/bin/sh
# One pod of ralph's Indexed Job: a fresh clone of the project's remote, the task branches earlier pods
# pushed, then ralph as the container's PID 1 (exec) on the task JOB_COMPLETION_INDEX names.
# Arguments are ralph run's own (--tasks, --agent, limits, --grace, the prompt); this script adds what every
# pod needs: --task-index job, --worktree, and the notification command that pushes the task's branch.
set -eu

: "${RALPH_REMOTE:?set RALPH_REMOTE to the git remote that holds the project and receives the branches}"
workspace="${RALPH_WORKSPACE:-/workspace}"
here="$(dirname "$0")"
push="${RALPH_PUSH_COMMAND:-node $here/push-branch.mjs}"

# A token for an https remote, handed to git by a credential helper read from the environment (never a file).
if [ -n "${GIT_TOKEN:-}" ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=credential.helper
  # shellcheck disable=SC2016 # expanded by git's helper shell when it asks, not here
  export GIT_CONFIG_VALUE_0='!f() { echo username=x-access-token; echo "password=$GIT_TOKEN"; }; f'
fi

git clone --quiet ${RALPH_BRANCH:+--branch "$RALPH_BRANCH"} -- "$RALPH_REMOTE" "$workspace/repo"
cd "$workspace/repo"
# A replacement pod goes on from the branch its predecessor pushed: ralph reuses ralph/<task-id> when it exists.
git fetch --quiet origin '+refs/heads/ralph/*:refs/heads/ralph/*'
# The commit this pod started from: push-branch.mjs pushes nothing that is not beyond it.
RALPH_POD_BASE="$(git rev-parse HEAD)"
export RALPH_POD_BASE

if [ -n "${RALPH_WEBHOOK_URL:-}" ]; then set -- --webhook "$RALPH_WEBHOOK_URL" "$@"; fi
exec ralph run --task-index job --worktree \
  --notify "$push" --notify-events "${RALPH_NOTIFY_EVENTS:-iteration_ended,run_ended,needs_human,waiting_limit,stalled}" \
  "$@"
