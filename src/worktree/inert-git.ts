// What makes ralph's git inert: the configuration and environment under which a git command runs no code the
// repository (or an agent writing in it) configured. Nothing in the repository is edited for it.

// Variables that point git at another repository, index or object store. A git hook that runs ralph
// (pre-commit, post-checkout) hands them down; inherited, they would make every command act on the outer
// repository's index instead of the worktree's. Inherited `-c` settings go too: ralph's own must be the last word.
const DROPPED_VARIABLES = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_QUARANTINE_PATH",
  "GIT_CEILING_DIRECTORIES",
  "GIT_REFLOG_ACTION",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_EXTERNAL_DIFF",
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "GIT_PROXY_COMMAND",
  "GIT_SEQUENCE_EDITOR",
  "GIT_TRACE",
  "GIT_TRACE2",
  "GIT_TRACE2_EVENT",
  "GIT_TRACE2_PERF",
];

// Settings that name a program git would run, each given a value that runs nothing (or a harmless builtin).
// Command-line settings outrank every configuration file, the repository's, the user's and the system's, so
// those files still apply for everything else (the commit author, safe.directory).
const INERT_SETTINGS: Array<[string, string]> = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.sshCommand", "false"],
  ["core.gitProxy", ""],
  ["core.askPass", "false"],
  ["core.editor", "true"],
  ["core.pager", "cat"],
  ["sequence.editor", "true"],
  ["credential.helper", ""],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  ["status.submoduleSummary", "false"],
  // Output ralph reads is never coloured, whatever the user's or system config asks.
  ["color.ui", "false"],
];

// The settings that name the person's own way to reach a remote: a push (in a git directory of ralph's own,
// which has no repository configuration) takes them from the person's configuration.
const PERSONS_TRANSPORT = new Set(["core.sshCommand", "core.gitProxy", "core.askPass", "credential.helper"]);

/** The `-c` switches that come before every git command ralph runs. */
export function inertConfigArgs(): string[] {
  return INERT_SETTINGS.flatMap(([key, value]) => ["-c", `${key}=${value}`]);
}

/** The `-c` switches of a push: the inert ones, but the person's ssh, proxy, askpass and credential helper. */
export function pushConfigArgs(): string[] {
  return INERT_SETTINGS.filter(([key]) => !PERSONS_TRANSPORT.has(key)).flatMap(([key, value]) => [
    "-c",
    `${key}=${value}`,
  ]);
}

/** The environment git runs in: the caller's, minus repository locations and program hooks, never prompting, untranslated. */
export function gitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const name of DROPPED_VARIABLES) delete env[name];
  for (const name of Object.keys(env)) if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name)) delete env[name];
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_EDITOR: "true", GIT_PAGER: "cat", LC_ALL: "C", LANGUAGE: "C" };
}

/** gitEnv, plus no optional locks when asked (a read-only look must never take index.lock from an agent's own git). */
export function inertEnv(base: NodeJS.ProcessEnv, noOptionalLocks: boolean): NodeJS.ProcessEnv {
  return { ...gitEnv(base), ...(noOptionalLocks ? { GIT_OPTIONAL_LOCKS: "0" } : {}) };
}

// The keys of a driver that name a program, by section, and the value each gets instead.
const DRIVER_KEYS: Record<string, Array<[string, string]>> = {
  filter: [
    ["clean", ""],
    ["smudge", ""],
    ["process", ""],
    ["required", "false"],
  ],
  diff: [
    ["command", ""],
    ["textconv", ""],
  ],
  merge: [["driver", ""]],
};

/**
 * Environment settings (GIT_CONFIG_COUNT/KEY/VALUE, which take any subsection name, unlike `-c`) that empty
 * every filter, diff and merge driver named in the keys `git config --name-only -z --get-regexp` listed.
 * A driver `.gitattributes` names but no configuration defines runs nothing, so these are all there are.
 */
export function repositoryDrivers(listed: string): NodeJS.ProcessEnv {
  const pairs = new Map<string, string>();
  for (const key of listed.split("\0")) {
    // An external diff program set for every file: emptied like a driver's (ralph's diffs pass --no-ext-diff anyway).
    if (key.toLowerCase() === "diff.external") pairs.set("diff.external", "");
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    if (first < 0 || last <= first) continue;
    const section = key.slice(0, first).toLowerCase();
    const name = key.slice(first + 1, last);
    for (const [variable, value] of DRIVER_KEYS[section] ?? []) pairs.set(`${section}.${name}.${variable}`, value);
  }
  // gitEnv dropped any inherited GIT_CONFIG_COUNT, so these are the only ones.
  const out: NodeJS.ProcessEnv = {};
  let index = 0;
  for (const [key, value] of pairs) {
    out[`GIT_CONFIG_KEY_${index}`] = key;
    out[`GIT_CONFIG_VALUE_${index}`] = value;
    index += 1;
  }
  if (index > 0) out.GIT_CONFIG_COUNT = String(index);
  return out;
}
