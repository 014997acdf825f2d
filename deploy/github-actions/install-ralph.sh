#!/bin/sh
# Installs ralph and the agent CLI on the runner. RALPH_PACKAGE: an npm spec (a published version, a
# tarball); empty: packs the ralph repository this action comes from, as `npm install -g` of a release would.
set -eu
if [ -n "${RALPH_PACKAGE:-}" ]; then
  npm install -g --no-audit --no-fund "$RALPH_PACKAGE"
else
  source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
  pack_dir="${RUNNER_TEMP:-/tmp}/ralph-pack"
  mkdir -p "$pack_dir"
  (cd "$source_dir" && npm ci --ignore-scripts --no-audit --no-fund && npm run build && npm pack --ignore-scripts --pack-destination "$pack_dir")
  npm install -g --no-audit --no-fund "$pack_dir"/*.tgz
fi
if [ -n "${AGENT_PACKAGE:-}" ]; then npm install -g --no-audit --no-fund "$AGENT_PACKAGE"; fi
ralph --version
