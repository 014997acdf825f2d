// The bubblewrap command line of one sandboxed process: what it sees, writes, and which namespaces it gets.
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { ensurePlaceholder } from "./placeholder.js";

/** Secret paths no sandboxed agent can read (SPEC section 15). */
export const DEFAULT_READ_DENY = [
  "~/.ssh",
  "~/.aws",
  "~/.gnupg",
  "~/.config/gcloud",
  "~/.netrc",
  "~/.docker/config.json",
  "~/.kube",
];

/** Everything that decides the walls. */
export interface Walls {
  /** The work directory (project or worktree): writable. */
  workDir: string;
  /** The project directory: its `.ralph/` is read-only inside. */
  projectDir: string;
  /** The agent's HOME, for `~` in paths. */
  home: string;
  /** Extra writable paths (existing ones only), after the work directory. */
  writeAllow: string[];
  /** The agent's own state (writable) and the code-running files in it (read-only again). */
  agentState: { writable: string[]; readOnly: string[] };
  /** Files the agent works on a private copy of (bound writable over the real one, never copied back). */
  copies?: ReadonlyArray<{ copy: string; path: string }>;
  /** Unreadable paths: the defaults and `sandbox.read_deny`. */
  readDeny: string[];
  /** A unix socket to bind into the sandbox at the same path (the network proxy), or null. */
  socket: string | null;
  /** A reviewer's view: the work directory is mounted read-only (and no extra writable path inside it). */
  readOnlyWork?: boolean;
  /** What must stay runnable (ralph's own files, the agent's program): read-only again where a private directory would hide it. */
  programs: string[];
  /** Where the command starts, when not in the work directory. */
  startDir?: string;
  /**
   * The run's own directory (RALPH_RUN_DIR, its real path, one of the project's runs: see shownRunDir), shown
   * as its view for this start shows it (see run-view.ts), or empty without one; every other run is hidden.
   */
  run?: { dir: string; view: string | null };
}

/** The project's runs hidden behind an empty read-only directory, with the current run's view bound at its place. */
function hideRuns(ralphDir: string, run: Walls["run"]): string[] {
  const runs = join(ralphDir, "runs");
  if (!existsSync(runs)) return [];
  const shown = run === undefined ? [] : run.view === null ? ["--dir", run.dir] : ["--ro-bind", run.view, run.dir];
  return ["--tmpfs", runs, ...shown, "--remount-ro", runs];
}

/** The real path of run directory `runDir` when it is one of the project's runs (the sandbox shows it), else null. */
export function shownRunDir(projectDir: string, runDir: string): string | null {
  const own = real(runDir);
  const runs = join(real(projectDir) ?? projectDir, ".ralph", "runs");
  return own !== null && own.startsWith(`${runs}/`) ? own : null;
}

/** The directories the sandbox replaces with empty private ones. */
const PRIVATE_DIRS = ["/tmp", "/var/tmp", "/run"];

/** `~/x` and relative paths made absolute (relative to the project). */
export function expandPath(path: string, home: string, base: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(base, path);
}

function real(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Mount options hiding one path: an empty read-only directory over a directory, /dev/null over a file. */
function hide(path: string): string[] {
  const target = real(path);
  if (target === null) return [];
  return statSync(target).isDirectory()
    ? ["--tmpfs", target, "--remount-ro", target]
    : ["--ro-bind", "/dev/null", target];
}

/**
 * What in a repository's `.git` names code git runs or redirects git elsewhere: directories (made empty when
 * missing, so there is something to bind read-only: an empty one changes nothing for git) and files (made
 * empty when missing, where an empty file means the same as none). `commondir` cannot be made so (git
 * refuses an empty one): an iteration that creates it fails (see tamper-scan.ts).
 */
const GIT_CODE_DIRS = ["hooks", "info", "modules", "worktrees"];
const GIT_CODE_FILES = ["config", "config.worktree", "objects/info/alternates"];

/** The git paths of a work directory that make git run code or look elsewhere: read-only inside. */
function gitProtected(workDir: string): string[] {
  const dotGit = join(workDir, ".git");
  let isDir: boolean;
  try {
    isDir = lstatSync(dotGit).isDirectory();
  } catch {
    return [];
  }
  // A worktree's `.git` is a file naming a directory outside it, which stays read-only like the rest.
  if (!isDir) return [dotGit, join(workDir, ".gitmodules")].filter((path) => existsSync(path));
  const dirs = GIT_CODE_DIRS.map((name) => join(dotGit, name)).filter((path) =>
    ensurePlaceholder(path, { kind: "directory" }),
  );
  const files = GIT_CODE_FILES.map((name) => join(dotGit, name)).filter((path) =>
    ensurePlaceholder(path, { kind: "file", content: "" }),
  );
  return [
    ...dirs,
    ...files,
    ...[join(dotGit, "commondir"), join(workDir, ".gitmodules")].filter((path) => existsSync(path)),
  ];
}

/** The namespaces and mounts of every sandbox, before its own paths (the probe starts one with these). */
export const SANDBOX_BASE_OPTIONS: readonly string[] = [
  // A user namespace and no capability at all, whoever starts ralph (root included): no mount, umount,
  // remount or cgroup move from inside; bubblewrap sets no_new_privs, so no setuid program gives one back.
  "--unshare-user",
  "--cap-drop",
  "ALL",
  "--die-with-parent",
  "--new-session",
  "--unshare-pid",
  "--unshare-ipc",
  "--unshare-uts",
  "--unshare-cgroup-try",
  "--unshare-net",
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
  "--tmpfs",
  "/var/tmp",
  // Unix sockets work through a read-only mount (the Docker daemon's, a user's D-Bus or ssh-agent under
  // /run/user, a database's): /run is replaced by an empty private one, as /tmp is.
  "--tmpfs",
  "/run",
];

/** A worktree's git directories (its own and the repository's), read-only inside so git can read them wherever they are. */
function worktreeGitDirs(workDir: string): string[] {
  try {
    const line = /^gitdir: (.+)$/m.exec(readFileSync(join(workDir, ".git"), "utf8"))?.[1];
    if (line === undefined) return [];
    const gitDir = resolve(workDir, line.trim());
    const common = existsSync(join(gitDir, "commondir"))
      ? resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim())
      : null;
    return [common, gitDir].flatMap((dir) =>
      dir === null ? [] : [real(dir)].filter((path): path is string => path !== null),
    );
  } catch {
    return [];
  }
}

/** bubblewrap's options (everything before `--`) for these walls. */
export function bwrapOptions(walls: Walls): string[] {
  const options = [...SANDBOX_BASE_OPTIONS];
  for (const path of walls.programs) {
    const target = real(path);
    if (target !== null && PRIVATE_DIRS.some((dir) => target.startsWith(`${dir}/`)))
      options.push("--ro-bind", target, target);
  }
  const work = real(walls.workDir) ?? walls.workDir;
  const bind = walls.readOnlyWork === true ? "--ro-bind" : "--bind";
  options.push(bind, work, work);
  for (const path of [...walls.agentState.writable, ...walls.writeAllow]) {
    const target = real(expandPath(path, walls.home, walls.projectDir));
    if (target !== null && !(walls.readOnlyWork === true && (target === work || target.startsWith(`${work}/`))))
      options.push("--bind", target, target);
  }
  for (const { copy, path } of walls.copies ?? []) {
    const target = real(path);
    if (target !== null) options.push("--bind", copy, target);
  }
  for (const path of walls.agentState.readOnly) {
    const target = real(path);
    if (target !== null) options.push("--ro-bind", target, target);
  }
  // Read-only again inside the writable places: git's code-running files and ralph's own directory.
  const ralphDir = join(real(walls.projectDir) ?? walls.projectDir, ".ralph");
  // ralph.yaml too: an agent that edits it would loosen the sandbox of the person's next run.
  const ralphYaml = [join(work, "ralph.yaml"), join(real(walls.projectDir) ?? walls.projectDir, "ralph.yaml")].filter(
    (path, index, all) => all.indexOf(path) === index && existsSync(path),
  );
  // `.git` bound onto itself is a mount point: the agent can neither rename it away nor put its own in its place.
  const dotGit = join(work, ".git");
  if (walls.readOnlyWork !== true && isDirectory(dotGit)) options.push("--bind", dotGit, dotGit);
  // Listed (and their placeholders made) once, bound again below when the work tree is bound twice.
  const gitPaths = gitProtected(work);
  const readOnly = [...worktreeGitDirs(work), ...gitPaths, ...ralphYaml, ...(existsSync(ralphDir) ? [ralphDir] : [])];
  for (const path of readOnly) options.push("--ro-bind", path, path);
  if (existsSync(ralphDir)) options.push(...hideRuns(ralphDir, walls.run));
  // A worktree lives under `.ralph/worktrees/`: it is writable again after `.ralph/` was made read-only.
  if (work.startsWith(`${ralphDir}/`)) {
    options.push(bind, work, work);
    if (walls.readOnlyWork !== true && isDirectory(dotGit)) options.push("--bind", dotGit, dotGit);
    for (const path of gitPaths) options.push("--ro-bind", path, path);
  }
  for (const path of walls.readDeny) options.push(...hide(expandPath(path, walls.home, walls.projectDir)));
  if (walls.socket !== null) options.push("--bind", walls.socket, walls.socket);
  options.push("--chdir", walls.startDir ?? work);
  return options;
}

/** The agent's HOME as the sandbox sees it. */
export function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME !== "" ? env.HOME : homedir();
}
