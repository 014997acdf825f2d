// --sandbox (SPEC section 15) through the built CLI: one hostile command agent tries every way out it knows.
// Sandboxed, each attempt fails (and a refused connection is a sandbox_denied event); the same agent without
// --sandbox gets through each one (the known-false control), so the walls, not the harness, stop it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createUnixServer, type AddressInfo, type Server as UnixServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, RALPH, readEvents } from "../helpers/cli.js";
import { survivors } from "../fixtures/e2e-harness.js";
import { waitFor, within } from "../helpers/wait.js";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";

const cleanup = cleanupAfterTests();
const HOSTILE = fileURLToPath(new URL("../fixtures/hostile-agent.js", import.meta.url));
const SECRET = "secret-key-material-4711";
// A webhook nobody listens on (only needs_human would reach it, and nothing asks).
const WEBHOOK = "http://127.0.0.1:9/hostile-hook-secret";

/** Why a sandbox cannot be built here (from `ralph doctor --json`), or null. */
function sandboxMissing(): string | null {
  const result = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
    env: cleanEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });
  const sandbox = (JSON.parse(result.stdout) as { sandbox?: { ok: boolean; why?: string } }).sandbox;
  return sandbox?.ok ? null : `no sandbox here: ${sandbox?.why ?? "doctor says nothing"}`;
}

/** Whether supervision `mode` can be had here. */
function modeWorks(mode: string): boolean {
  return (
    spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
      env: cleanEnv({ RALPH_SUPERVISION: mode }),
      encoding: "utf8",
      timeout: 60_000,
    }).status === 0
  );
}

async function server(answer: string): Promise<Server> {
  const made = createServer((_req, res) => res.end(`${answer}\n`));
  await new Promise<void>((resolve) => made.listen(0, "127.0.0.1", resolve));
  return made;
}

const portOf = (made: Server): number => (made.address() as AddressInfo).port;

interface Attempt {
  attack: string;
  ok: boolean;
  detail: string;
}

const skip = process.platform !== "linux" ? "Linux only" : sandboxMissing();

describe("--sandbox against a hostile agent", { concurrency: 2, skip: skip ?? false }, () => {
  let allowed: Server;
  let blocked: Server;
  // A daemon's unix socket under /run (where Docker's and a user's D-Bus live), where this test may make one.
  const unixPath = `/run/ralph-e2e-${process.pid}.sock`;
  let daemon: UnixServer | null = null;
  before(async () => {
    allowed = await server("allowed-server");
    blocked = await server("blocked-server");
    const made = createUnixServer((socket) => socket.end("daemon-answer\n"));
    daemon = await new Promise<UnixServer | null>((resolve) => {
      made.once("error", () => resolve(null));
      made.listen(unixPath, () => resolve(made));
    });
  });
  after(() => {
    allowed.close();
    blocked.close();
    daemon?.close();
  });

  /** Runs the hostile agent for one iteration, sandboxed or not, and reads what it managed. */
  async function attack(mode: "cgroup" | "subreaper", sandboxed: boolean) {
    const { dir, runDir } = cleanup.project("ralph-sandbox-");
    // The person's HOME and another directory of theirs, both outside the project.
    const { dir: elsewhere } = cleanup.project("ralph-sandbox-home-");
    const home = join(elsewhere, "home");
    const outside = join(elsewhere, "outside");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(home, ".ssh", "id_ed25519"), `${SECRET}\n`, { mode: 0o600 });
    writeFileSync(
      join(dir, "ralph.yaml"),
      `sandbox:\n  mode: ${sandboxed ? "on" : "off"}\n  network:\n    allow: ["127.0.0.1:${portOf(allowed)}"]\n  env: ["HOSTILE_*"]\n`,
    );
    const env = cleanEnv({
      RALPH_SUPERVISION: mode,
      HOME: home,
      HOSTILE_OUTSIDE: outside,
      HOSTILE_RALPH: RALPH,
      HOSTILE_ALLOWED: String(portOf(allowed)),
      HOSTILE_BLOCKED: String(portOf(blocked)),
      ...(daemon ? { HOSTILE_UNIX: unixPath } : {}),
      ...(mode === "cgroup" ? { HOSTILE_CGROUP: "1" } : { HOSTILE_SUBREAPER: "1" }),
      // Secrets of the person's: ralph's own environment, and a webhook in the run's settings.
      GITHUB_TOKEN: "ghp_hostile",
      AWS_SECRET_ACCESS_KEY: "aws-hostile",
      RALPH_WEBHOOK_URL: WEBHOOK,
      // ralph.yaml decides.
      RALPH_SANDBOX: "",
    });
    const args = [
      "run",
      "--name",
      "x",
      "-n",
      "1",
      "--grace",
      "1s",
      "--webhook",
      WEBHOOK,
      "--notify-events",
      "needs_human",
    ];
    const ralph = cleanup.ralph([...args, "--agent", "command", "go", "--", process.execPath, HOSTILE], dir, env);
    const result = await within(ralph.done, 60_000, "ralph's exit");
    const report = join(dir, "attacks.json");
    assert.ok(existsSync(report), `the agent wrote no report:\n${result.stdout}${result.stderr}`);
    const attempts = new Map(
      readFileSync(report, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Attempt)
        .map((attempt) => [attempt.attack, attempt]),
    );
    return { dir, runDir, outside, result, attempts, events: readEvents(runDir) };
  }

  const RUN_DIR_FILES = ["ANSWER", "STOP", "settings.json", "requests/set-zz-1.request.json"];
  const COMMON = [
    "write_outside",
    "read_secret",
    "read_env_secret",
    "read_run_settings",
    "loosen_ralph_yaml",
    ...RUN_DIR_FILES.map((name) => `write_run_dir_${name}`),
    "ralph_stop",
    "ralph_set",
    "connect_blocked_direct",
    "signal_ralph",
  ];

  for (const mode of ["cgroup", "subreaper"] as const) {
    const own = mode === "cgroup" ? "leave_cgroup" : "kill_subreaper";
    const rootOnly =
      mode === "cgroup" && process.getuid?.() !== 0 ? "moving a process between cgroups needs root here" : null;
    const modeSkip = !modeWorks(mode) ? `${mode} supervision unavailable here` : rootOnly;
    describe(`${mode} supervision`, { skip: modeSkip ?? false }, () => {
      test("sandboxed: every attempt fails, and the refused connection is a sandbox_denied event", async () => {
        const { attempts, outside, runDir, events, result, dir } = await attack(mode, true);
        for (const name of [
          ...COMMON,
          "hold_capabilities",
          "connect_blocked_proxy",
          own,
          ...(daemon ? ["connect_unix_socket"] : []),
        ]) {
          const attempt = attempts.get(name);
          assert.equal(attempt?.ok, false, `${name} got through: ${JSON.stringify(attempt)}\n${result.stdout}`);
        }
        assert.equal(existsSync(join(outside, "escaped.txt")), false);
        // Inside, ralph's own commands cannot reach the run: its directory is read-only, its runner invisible.
        // (ralph's own refusal of requests from inside a run, SPEC section 14, may come first.)
        assert.match(attempts.get("ralph_set")?.detail ?? "", /read-only file system|is for people/);
        assert.match(attempts.get("signal_ralph")?.detail ?? "", /ESRCH/);
        // The cgroup files are read-only (and the cgroup namespace shows the agent's cgroup as the root); the subreaper is out of sight.
        assert.match(
          attempts.get(own)?.detail ?? "",
          mode === "cgroup" ? /read-only file system/ : /no ralph-subreaper among its ancestors/,
        );
        assert.doesNotMatch(readFileSync(join(runDir, "iter-001.log"), "utf8"), new RegExp(SECRET));
        for (const name of RUN_DIR_FILES.filter((file) => file !== "settings.json"))
          assert.equal(existsSync(join(runDir, name)), false, `${name} exists`);
        assert.notEqual(readFileSync(join(runDir, "settings.json"), "utf8"), "{}\n");
        // The allowed server is reachable through the sandbox's proxy, the other one is refused there.
        assert.deepEqual(
          [attempts.get("connect_allowed")?.ok, attempts.get("connect_allowed")?.detail],
          [true, "allowed-server"],
        );
        assert.match(attempts.get("connect_blocked_proxy")?.detail ?? "", /HTTP 403/);
        const denied = events.filter((event) => event.type === "sandbox_denied");
        assert.deepEqual(
          denied.map((event) => [event.host, event.port, event.iteration]),
          [["127.0.0.1", portOf(blocked), 1]],
        );
        const blockedLine = new RegExp(`sandbox: blocked a connection to 127\\.0\\.0\\.1:${portOf(blocked)}`);
        assert.match(result.stdout, blockedLine);
        // `ralph logs` (and the dashboard, which streams the same run.log) show it too.
        const logs = spawnSync(process.execPath, [RALPH, "logs", "x"], {
          cwd: dir,
          env: cleanEnv(),
          encoding: "utf8",
          timeout: 30_000,
        });
        assert.match(logs.stdout, blockedLine);
        assert.equal(result.code, 3, result.stderr);
      });

      test("control without --sandbox: the same agent gets through every one", async () => {
        const { attempts, outside, result } = await attack(mode, false);
        // `ralph set` and `stop` from the agent reach ralph, which may refuse them by itself (SPEC section 14).
        for (const name of ["ralph_set", "ralph_stop"]) {
          const attempt = attempts.get(name);
          assert.ok(
            attempt?.ok || /refused: the request comes from this run's agent|is for people/.test(attempt?.detail ?? ""),
            `${name}: ${JSON.stringify(attempt)}`,
          );
        }
        const refusedByRalph = ["ralph_set", "ralph_stop"];
        const root = process.getuid?.() === 0 ? ["hold_capabilities"] : [];
        for (const name of [
          ...COMMON.filter((attack) => !refusedByRalph.includes(attack)),
          ...root,
          own,
          "connect_allowed",
          ...(daemon ? ["connect_unix_socket"] : []),
        ]) {
          const attempt = attempts.get(name);
          assert.equal(
            attempt?.ok,
            true,
            `${name} failed without the sandbox: ${JSON.stringify(attempt)}\n${result.stdout}${result.stderr}`,
          );
        }
        assert.equal(attempts.get("read_secret")?.detail, SECRET);
        assert.equal(existsSync(join(outside, "escaped.txt")), true);
      });
    });
  }
});

for (const mode of ["cgroup", "subreaper"] as const)
  describe(
    `--sandbox inside ralph's supervision (${mode} mode)`,
    { concurrency: 2, skip: skip ?? (modeWorks(mode) ? false : `${mode} supervision unavailable here`) },
    () => {
      // A sandboxed agent that leaves a daemon in a new session, says so, then hangs.
      const DAEMON = `setsid -f sleep 300 </dev/null >/dev/null 2>&1; echo up > ready.tmp && mv ready.tmp ready; exec sleep 300`;

      async function started(
        script = DAEMON,
      ): Promise<{ ralph: ReturnType<typeof cleanup.ralph>; tag: { key: string; value: string }; dir: string }> {
        const { dir, tag } = cleanup.scenario();
        const args = [
          "run",
          "--sandbox",
          "--name",
          "x",
          "-n",
          "1",
          "--grace",
          "2s",
          "--agent",
          "command",
          "go",
          "--",
          "env",
          `${tag.key}=${tag.value}`,
          "bash",
          "-c",
          script,
        ];
        const ralph = cleanup.ralph(args, dir, cleanEnv({ RALPH_SUPERVISION: mode }));
        await waitFor(
          () => {
            if (!ralph.running()) throw new Error(`ralph ended before the agent was up:\n${ralph.output()}`);
            return existsSync(join(dir, "ready"));
          },
          "the agent's ready file",
          20_000,
        );
        return { ralph, tag, dir };
      }

      test("the polite signal reaches the agent itself: bubblewrap does not die of it and take the agent along", async () => {
        // The handler takes its time, as an agent saving its session does: bubblewrap must outlive it.
        const trapping = `trap 'sleep 0.3; echo saved > saved; exit 0' TERM; echo up > ready.tmp && mv ready.tmp ready; while :; do sleep 0.05; done`;
        const { ralph, tag, dir } = await started(trapping);
        ralph.child.kill("SIGINT");
        const result = await within(ralph.done, 20_000, "ralph's exit after SIGINT");
        assert.equal(result.signal, "SIGINT", result.stdout + result.stderr);
        assert.equal(existsSync(join(dir, "saved")), true, "the agent's SIGTERM handler ran");
        assert.deepEqual(survivors(tag), []);
      });

      test("Ctrl-C ends the sandboxed agent and the daemon it left, and ralph dies of SIGINT", async () => {
        const { ralph, tag } = await started();
        assert.ok(survivors(tag).length >= 2, "the agent and its daemon run, tagged");
        ralph.child.kill("SIGINT");
        const result = await within(ralph.done, 20_000, "ralph's exit after SIGINT");
        assert.equal(result.signal, "SIGINT", result.stdout + result.stderr);
        assert.deepEqual(survivors(tag), []);
      });

      test("ralph killed with SIGKILL still leaves no sandboxed process behind", async () => {
        const { ralph, tag } = await started();
        ralph.child.kill("SIGKILL");
        await within(ralph.done, 10_000, "ralph's end");
        await waitFor(() => survivors(tag).length === 0, "the sandboxed tree to be gone", 5_000);
      });
    },
  );

describe("--sandbox and the commands around the agent", { concurrency: 2, skip: skip ?? false }, () => {
  /** A run whose check reads the planted secret and whose notify command copies it out. */
  async function run(sandboxed: boolean) {
    const { dir, runDir } = cleanup.project("ralph-sandbox-check-");
    const { dir: elsewhere } = cleanup.project("ralph-sandbox-home-");
    const secret = join(elsewhere, ".ssh", "id_ed25519");
    mkdirSync(join(elsewhere, ".ssh"));
    writeFileSync(secret, `${SECRET}\n`, { mode: 0o600 });
    const copy = join(elsewhere, "notified");
    const args = [
      "run",
      ...(sandboxed ? ["--sandbox"] : []),
      "--name",
      "x",
      "-n",
      "1",
      "--check",
      `grep -q ${SECRET} ~/.ssh/id_ed25519`,
    ];
    const notify = ["--notify", `cp ${secret} ${copy}`];
    const ralph = cleanup.ralph(
      [...args, ...notify, "--agent", "command", "go", "--", "true"],
      dir,
      cleanEnv({ HOME: elsewhere }),
    );
    const result = await within(ralph.done, 30_000, "ralph's exit");
    const checked = readEvents(runDir).find((event) => event.type === "criteria_checked");
    return { result, checked, copied: existsSync(copy) };
  }

  test("a check runs in the sandbox (it cannot read the secret); a notification command runs outside it", async () => {
    const { result, checked, copied } = await run(true);
    assert.equal(checked?.passed, false, result.stdout);
    assert.equal(copied, true, "the person's own notify command is not sandboxed");
    assert.equal(result.code, 3);
  });

  test("sandbox.env: only the listed variables (and the ones every process needs) reach the agent", async () => {
    const { dir } = cleanup.project("ralph-sandbox-env-");
    writeFileSync(join(dir, "ralph.yaml"), "sandbox:\n  env: [KEEP_ME]\n");
    const ralph = cleanup.ralph(
      ["run", "--name", "x", "-n", "1", "--agent", "command", "go", "--", "/bin/sh", "-c", "env > env.txt"],
      dir,
      cleanEnv({ KEEP_ME: "kept", DROP_ME: "dropped", RALPH_SANDBOX: "" }),
    );
    const result = await within(ralph.done, 30_000, "ralph's exit");
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const seen = readFileSync(join(dir, "env.txt"), "utf8").split("\n");
    assert.ok(seen.includes("KEEP_ME=kept"), seen.join("\n"));
    assert.ok(!seen.some((line) => line.startsWith("DROP_ME=")), "DROP_ME passed");
    assert.ok(
      seen.some((line) => line.startsWith("PATH=")) && seen.includes("RALPH_RUN_ID=x") && seen.includes("TMPDIR=/tmp"),
    );
  });

  test("sandbox.read_deny hides a file of the project; sandbox.write_allow opens a directory outside it", async () => {
    const { dir } = cleanup.project("ralph-sandbox-paths-");
    const { dir: shared } = cleanup.project("ralph-sandbox-shared-");
    writeFileSync(join(dir, "secrets.env"), "TOKEN=hunter2\n");
    writeFileSync(join(dir, "ralph.yaml"), `sandbox:\n  read_deny: [secrets.env]\n  write_allow: ["${shared}"]\n`);
    const script = `cat secrets.env > seen.txt 2>&1; echo cache > "$1/cache.txt"`;
    const ralph = cleanup.ralph(
      ["run", "--name", "x", "-n", "1", "--agent", "command", "go", "--", "/bin/sh", "-c", script, "agent", shared],
      dir,
      cleanEnv({ RALPH_SANDBOX: "" }),
    );
    const result = await within(ralph.done, 30_000, "ralph's exit");
    assert.equal(result.code, 3, result.stdout + result.stderr);
    assert.doesNotMatch(readFileSync(join(dir, "seen.txt"), "utf8"), /hunter2/);
    assert.equal(readFileSync(join(shared, "cache.txt"), "utf8"), "cache\n");
    assert.equal(readFileSync(join(dir, "secrets.env"), "utf8"), "TOKEN=hunter2\n", "the person's file is untouched");
  });

  test("control without --sandbox: the same check reads the secret and passes", async () => {
    const { result, checked, copied } = await run(false);
    assert.equal(checked?.passed, true, result.stdout);
    assert.equal(copied, true);
    assert.equal(result.code, 0);
  });
});

describe("--sandbox where no sandbox can be built", { concurrency: 2 }, () => {
  // No bwrap on this PATH (the agent is given by its full path).
  const noBwrap = () => cleanEnv({ PATH: "/nonexistent" });

  test("--sandbox: a usage error naming the cause and the package, and nothing is created", async () => {
    const { dir } = cleanup.project("ralph-sandbox-none-");
    const ralph = cleanup.ralph(
      ["run", "--sandbox", "-n", "1", "--agent", "command", "go", "--", "/bin/true"],
      dir,
      noBwrap(),
    );
    const result = await within(ralph.done, 30_000, "ralph's exit");
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.match(result.stderr, /--sandbox: bwrap \(bubblewrap\) not found on PATH: install the bubblewrap package/);
    assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
    assert.equal(existsSync(join(dir, ".ralph")), false);
  });

  test("ralph doctor says whether the sandbox works, and why not", () => {
    const missing = spawnSync(process.execPath, [RALPH, "doctor"], {
      env: noBwrap(),
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.match(
      missing.stdout,
      /^sandbox +unavailable: bwrap \(bubblewrap\) not found on PATH: install the bubblewrap package/m,
    );
    const json = spawnSync(process.execPath, [RALPH, "doctor", "--json"], {
      env: noBwrap(),
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal((JSON.parse(json.stdout) as { sandbox: { ok: boolean } }).sandbox.ok, false);
    if (skip === null) {
      const works = spawnSync(process.execPath, [RALPH, "doctor"], {
        env: cleanEnv(),
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.match(works.stdout, /^sandbox +works: bubblewrap \S+ at \S*bwrap/m);
    }
  });

  test("user namespaces refused: the usage error says so and how to allow them", async () => {
    const { dir, files } = cleanup.project("ralph-sandbox-userns-");
    // A bwrap that fails the way it does where unprivileged user namespaces are off.
    writeFileSync(
      join(files, "bwrap"),
      "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
      { mode: 0o755 },
    );
    const ralph = cleanup.ralph(
      ["run", "--sandbox", "-n", "1", "--agent", "command", "go", "--", "/bin/true"],
      dir,
      cleanEnv({ PATH: `${files}:/usr/bin:/bin` }),
    );
    const result = await within(ralph.done, 30_000, "ralph's exit");
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.match(
      result.stderr,
      /bwrap cannot create a sandbox here: bwrap: setting up uid map: Permission denied \((unprivileged user namespaces are refused here|the kernel gives no user namespace here, and without one the agent would hold root's capabilities)/,
    );
    assert.equal(existsSync(join(dir, ".ralph")), false);
  });

  test("sandbox: auto runs without it, after one warning line", async () => {
    const { dir } = cleanup.project("ralph-sandbox-auto-");
    writeFileSync(join(dir, "ralph.yaml"), "sandbox: auto\n");
    const ralph = cleanup.ralph(["run", "-n", "1", "--agent", "command", "go", "--", "/bin/true"], dir, {
      ...noBwrap(),
      RALPH_SANDBOX: "auto",
    });
    const result = await within(ralph.done, 30_000, "ralph's exit");
    assert.equal(result.code, 3, result.stdout + result.stderr);
    const warnings = result.stderr.split("\n").filter((line) => line.includes("warning"));
    assert.deepEqual(warnings.length, 1, result.stderr);
    assert.match(
      warnings[0] ?? "",
      /sandbox: auto, but bwrap \(bubblewrap\) not found.*the agent runs without a sandbox/,
    );
  });
});
