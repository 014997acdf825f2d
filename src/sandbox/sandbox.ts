// One run's sandbox: the walls (bubblewrap), the way out (the egress proxy), and the environment that passes.
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentName } from "../agents/types.js";
import { findOnPath } from "../process/supervision.js";
import type { SpawnAgentOptions, SpawnResult } from "../process/spawn-agent.js";
import { agentState } from "./agent-state.js";
import { agentVariables } from "./billing.js";
import { bwrapOptions, DEFAULT_READ_DENY, homeOf, shownRunDir } from "./bwrap-argv.js";
import type { Denied, EgressProxy } from "./egress-proxy.js";
import { makeRunView, removeRunView } from "./run-view.js";
import { PROXY_PORT, sandboxedArgv } from "./sandbox-launcher.js";
import { watchTamper, type TamperScan } from "./tamper-scan.js";
import { envPasses, type SandboxSettings } from "./sandbox-policy.js";
import type { SandboxProbe } from "./sandbox-probe.js";

/**
 * The variables every sandboxed process gets (an allowlist: everything else stays out unless `sandbox.env`
 * names it): what a process cannot work without, and only the RALPH_* meant for the agent (its run, run
 * directory and iteration, whether it reviews, the demo's, and the supervision's marker) — never the
 * person's RALPH_* settings, which can carry a webhook URL.
 */
const ALWAYS = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "COLORTERM",
  "LANG",
  "LC_*",
  "TZ",
  "NO_COLOR",
  "FORCE_COLOR",
  "OPENCODE_DISABLE_PROJECT_CONFIG",
];
const RALPH_FOR_AGENT = [
  "RALPH_RUN_ID",
  "RALPH_RUN_DIR",
  "RALPH_ITERATION",
  "RALPH_REVIEW",
  "RALPH_DEMO_TASKS",
  "RALPH_DEMO_FREE",
  "RALPH_DEMO_PROJECT",
  "RALPH_DEMO_DELAY_MS",
  "RALPH_SUPERVISOR",
  "RALPH_CHECK_TREE",
];
/** ralph's own package (its built files and node_modules), which sandboxed checks and agents may run from. */
const RALPH_ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"];

/** What the engine asks of a sandbox: wrapping a command, and hearing about refused connections. */
export interface SandboxIo {
  /** The argv and environment that run `argv` inside the sandbox (`view`: a reviewer's read-only one). */
  wrap(argv: string[], env: NodeJS.ProcessEnv, view?: ReviewerView): { argv: string[]; env: NodeJS.ProcessEnv };
  /** Calls `report` for every connection the allowlist refuses, until the returned function is called. */
  watchDenied(report: (denied: Denied) => void): () => void;
  /** Takes the work tree's baseline (once, at the run's start); the returned scan says what was planted since and undoes it (see tamper-scan.ts). */
  watchTamper?(workDir: string, quarantineDir: string, env: NodeJS.ProcessEnv): Promise<TamperScan>;
}

/** How a reviewer is walled in: the work tree read-only, and its own agent's state writable. */
export interface ReviewerView {
  readOnly: true;
  agent: AgentName;
  /** Where the reviewer starts when not in the work tree (a CLI that reads settings from its directory starts in HOME). */
  cwd?: string;
}

/** The API host each agent talks to, from its base-URL variable or its default. */
function apiHost(agent: AgentName, env: NodeJS.ProcessEnv): string[] {
  const fromUrl = (variable: string, fallback: string): string[] => {
    const raw = env[variable];
    if (!raw) return [fallback];
    try {
      const url = new URL(raw);
      const port = url.port === "" ? (url.protocol === "http:" ? "80" : "443") : url.port;
      return [`${url.hostname}:${port}`];
    } catch {
      return [fallback];
    }
  };
  switch (agent) {
    case "claude":
      return fromUrl("ANTHROPIC_BASE_URL", "api.anthropic.com:443");
    case "codex":
      return fromUrl("OPENAI_BASE_URL", "api.openai.com:443");
    case "gemini":
      return fromUrl("GOOGLE_GEMINI_BASE_URL", "generativelanguage.googleapis.com:443");
    case "opencode":
      return ["api.anthropic.com:443", "api.openai.com:443", "opencode.ai:443"];
    case "demo":
    case "command":
      return [];
    default: {
      const unreachable: never = agent;
      return unreachable;
    }
  }
}

/** The hosts a run's sandbox lets through. */
export function allowedHosts(settings: SandboxSettings, agent: AgentName, env: NodeJS.ProcessEnv): string[] {
  switch (settings.network.kind) {
    case "none":
      return [];
    case "allow":
      return settings.network.hosts;
    case "default":
      return apiHost(agent, env);
    default: {
      const unreachable: never = settings.network;
      return unreachable;
    }
  }
}

/** A run's sandbox, ready to wrap commands. */
export class Sandbox implements SandboxIo {
  private readonly listeners = new Set<(denied: Denied) => void>();
  private proxy: EgressProxy | null = null;
  private copyDir: string | null = null;
  /** Every host:port the proxy refused during the run. */
  private readonly refused = new Set<string>();
  /** The agent's private copies, by the path they stand for. */
  private readonly copies = new Map<string, string>();
  /** Copies made so far (each file's name is numbered). */
  private copied = 0;
  /** The run directory views still in use (see run-view.ts). */
  private readonly views = new Set<string>();

  private constructor(
    private readonly probe: Extract<SandboxProbe, { ok: true }>,
    private readonly settings: SandboxSettings,
    private readonly dirs: { projectDir: string; workDir: string; agent: AgentName; reviewers?: readonly AgentName[] },
    readonly hosts: string[],
  ) {}

  /** Opens the sandbox (starting its proxy when hosts are allowed). */
  static async open(
    probe: Extract<SandboxProbe, { ok: true }>,
    settings: SandboxSettings,
    input: {
      agent: AgentName;
      env: NodeJS.ProcessEnv;
      projectDir: string;
      workDir: string;
      reviewers?: readonly AgentName[];
    },
  ): Promise<Sandbox> {
    // The reviewers' API hosts get out too: each agent talks to its own provider.
    const hosts = [input.agent, ...(input.reviewers ?? [])].flatMap((agent) =>
      allowedHosts(settings, agent, input.env),
    );
    const sandbox = new Sandbox(probe, settings, input, [...new Set(hosts)]);
    if (sandbox.hosts.length > 0) {
      // Loaded only for a sandbox that reaches hosts: it loads Node's http and net modules.
      const { startEgressProxy } = await import("./egress-proxy.js");
      sandbox.proxy = await startEgressProxy(sandbox.hosts, (denied) => {
        sandbox.refused.add(`${denied.host}:${denied.port}`);
        sandbox.listeners.forEach((listen) => listen(denied));
      });
    }
    return sandbox;
  }

  /** One line for the run's start: what is walled in and what gets out. */
  describe(): string {
    const network = this.hosts.length === 0 ? "no network" : `network only to ${this.hosts.join(", ")}`;
    const how = this.settings.mode === "auto" ? "sandbox (on by default; --no-sandbox runs without it)" : "sandbox";
    return `${how}: ${this.probe.version}; writable: the work directory, the agent's own state and a private /tmp${this.settings.writeAllow.length > 0 ? `, ${this.settings.writeAllow.join(", ")}` : ""}; ${network}; secrets hidden: ${[...DEFAULT_READ_DENY, ...this.settings.readDeny].join(", ")}`;
  }

  /**
   * The names a variable may have to pass in to `agent`: the fixed list, that agent's own, and `sandbox.env`.
   * Each wrap has its own: the agent never gets a reviewer's credentials, nor a reviewer the agent's.
   */
  private allowed(agent: AgentName): string[] {
    return [...ALWAYS, ...RALPH_FOR_AGENT, ...agentVariables(agent), ...(this.settings.env ?? [])];
  }

  /** The names of the person's variables that pass in to `agent` (for the start line; values never). */
  passing(env: NodeJS.ProcessEnv, agent: AgentName = this.dirs.agent): string[] {
    const inside = this.environment(env, agent);
    return Object.keys(env)
      .filter((name) => inside[name] !== undefined && inside[name] === env[name])
      .sort();
  }

  /** One start line naming every variable of the person's that reaches the agent (and what a reviewer gets besides). */
  describeEnvironment(env: NodeJS.ProcessEnv): string {
    const names = this.passing(env);
    const reviewers = [...new Set(this.dirs.reviewers ?? [])].flatMap((agent) => {
      const own = this.passing(env, agent).filter((name) => !names.includes(name));
      return own.length > 0 ? [`; a ${agent} reviewer also gets ${own.join(", ")}`] : [];
    });
    return `sandbox: variables passed in: ${names.length > 0 ? names.join(", ") : "none"}${reviewers.join("")} (and RALPH_RUN_ID, RALPH_RUN_DIR, RALPH_ITERATION; every other one stays out unless sandbox.env names it)`;
  }

  /** The run's closing lines on refused connections: the hosts, and the `sandbox.network.allow` line that lets them through. */
  refusedLines(): string[] {
    if (this.refused.size === 0) return [];
    const hosts = [...this.refused].sort();
    const allow = [...new Set([...this.hosts, ...hosts])].map((host) => JSON.stringify(host)).join(", ");
    return [
      `sandbox: the agent was refused connections to ${hosts.join(", ")}`,
      `to allow them, in ralph.yaml: sandbox: {network: {allow: [${allow}]}}`,
    ];
  }

  /** The environment inside for `agent`: an allowlist (see ALWAYS) and `sandbox.env`, temp directories private, the proxy set. */
  environment(env: NodeJS.ProcessEnv, agent: AgentName = this.dirs.agent): NodeJS.ProcessEnv {
    const allowed = this.allowed(agent);
    const inside: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(env))
      if (value !== undefined && envPasses(name, allowed) && !/^no_proxy$/i.test(name)) inside[name] = value;
    // Claude Code as root skips permission prompts only when told it is sandboxed: here it is, and only here.
    inside.IS_SANDBOX = "1";
    for (const name of [
      ...PROXY_VARIABLES,
      "SSH_AUTH_SOCK",
      "XDG_RUNTIME_DIR",
      "DBUS_SESSION_BUS_ADDRESS",
      "DOCKER_HOST",
    ])
      delete inside[name];
    for (const name of ["TMPDIR", "TMP", "TEMP"]) inside[name] = "/tmp";
    if (this.proxy !== null) for (const name of PROXY_VARIABLES) inside[name] = `http://127.0.0.1:${PROXY_PORT}`;
    return inside;
  }

  /**
   * The argv and environment that run `argv` inside the sandbox, and the view of the run directory made for
   * it (removed by close(), or by spawn() once the process has exited).
   */
  wrap(
    argv: string[],
    env: NodeJS.ProcessEnv,
    view?: ReviewerView,
  ): { argv: string[]; env: NodeJS.ProcessEnv; runView?: string } {
    const home = homeOf(env);
    const state = agentState(view?.agent ?? this.dirs.agent, home, env, view?.cwd ?? this.dirs.workDir);
    const walls = {
      projectDir: this.dirs.projectDir,
      workDir: this.dirs.workDir,
      home,
      agentState: state,
      // A reviewer gets a fresh copy of the person's file, never the agent's (which the agent may have written).
      copies: state.copies
        .map((path) => ({ path, copy: this.privateCopy(path, view === undefined) }))
        .filter((entry): entry is { path: string; copy: string } => entry.copy !== null),
      readOnlyWork: view?.readOnly === true,
      writeAllow: this.settings.writeAllow,
      readDeny: [...DEFAULT_READ_DENY, ...this.settings.readDeny],
      socket: this.proxy?.socket ?? null,
      // The agent's program and every path in its command line (a script under /tmp, hidden by the private /tmp otherwise).
      programs: [RALPH_ROOT, ...argv.filter((arg) => isAbsolute(arg))],
      ...(view?.cwd !== undefined ? { startDir: view.cwd } : {}),
    };
    const inside = this.environment(env, view?.agent ?? this.dirs.agent);
    // The view is made last, and removed again when the walls cannot be built.
    const runDir = env.RALPH_RUN_DIR ? shownRunDir(this.dirs.projectDir, env.RALPH_RUN_DIR) : null;
    const runView = runDir === null ? null : makeRunView(runDir);
    if (runView !== null) this.views.add(runView);
    try {
      const options = bwrapOptions({ ...walls, ...(runDir !== null ? { run: { dir: runDir, view: runView } } : {}) });
      return {
        argv: sandboxedArgv(this.probe.perl, this.probe.bwrap, options, this.proxy?.socket ?? null, argv),
        env: inside,
        ...(runView !== null ? { runView } : {}),
      };
    } catch (error) {
      this.dropView(runView);
      throw error;
    }
  }

  private dropView(view: string | null | undefined): void {
    if (view === null || view === undefined) return;
    removeRunView(view);
    this.views.delete(view);
  }

  watchTamper(workDir: string, quarantineDir: string, env: NodeJS.ProcessEnv): Promise<TamperScan> {
    // What the agent CLIs (the agent's and the reviewers') would read as their config once it appears.
    const agents = [...new Set([this.dirs.agent, ...(this.dirs.reviewers ?? [])])];
    const watched = agents.flatMap((agent) => agentState(agent, homeOf(env), env, this.dirs.workDir).watched);
    return watchTamper(workDir, quarantineDir, env, [...new Set(watched)]);
  }

  watchDenied(report: (denied: Denied) => void): () => void {
    this.listeners.add(report);
    return () => this.listeners.delete(report);
  }

  /** Starts an agent inside the sandbox with `spawn` (the supervision's); a program not on PATH is reported as such. */
  spawn(
    options: SpawnAgentOptions,
    spawn: (options: SpawnAgentOptions) => Promise<SpawnResult>,
    view?: ReviewerView,
  ): Promise<SpawnResult> {
    const program = options.argv[0] ?? "";
    const found = program.includes("/") ? program : findOnPath(program, options.env.PATH ?? "");
    if (found === null)
      return Promise.resolve({ ok: false, error: "not_found", message: `command not found: ${program}` });
    const wrapped = this.wrap(
      [found, ...options.argv.slice(1)],
      options.env,
      view && options.cwd !== this.dirs.workDir ? { ...view, cwd: options.cwd } : view,
    );
    return spawn({ ...options, argv: wrapped.argv, env: wrapped.env }).then((result) => {
      if (result.ok) void result.agent.exited.then(() => this.dropView(wrapped.runView));
      else this.dropView(wrapped.runView);
      return result;
    });
  }

  /**
   * A private copy of `path` (0600 in a 0700 directory of the run's own), or null when it cannot be made:
   * the agent's, made at its first use and kept for the run (`shared`), or a fresh one for each reviewer.
   * Nothing is ever copied back: what the agent writes into it (an MCP server, a command) stays in the copy
   * and goes with it at the run's end.
   */
  private privateCopy(path: string, shared: boolean): string | null {
    const made = shared ? this.copies.get(path) : undefined;
    if (made !== undefined) return made;
    try {
      this.copyDir ??= mkdtempSync(join(tmpdir(), "ralph-sandbox-state-"));
      this.copied += 1;
      const copy = join(this.copyDir, `${this.copied}-${basename(path)}`);
      copyFileSync(path, copy);
      chmodSync(copy, 0o600);
      if (shared) this.copies.set(path, copy);
      return copy;
    } catch {
      return null;
    }
  }

  /** Stops the proxy and removes the private copies and the run directory views. */
  async close(): Promise<void> {
    for (const view of this.views) removeRunView(view);
    this.views.clear();
    if (this.copyDir !== null) rmSync(this.copyDir, { recursive: true, force: true });
    this.copyDir = null;
    this.copies.clear();
    this.listeners.clear();
    await this.proxy?.close();
    this.proxy = null;
  }
}
