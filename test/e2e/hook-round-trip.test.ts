// Hook mode from start to end as a person meets it: a --help that reads as a command line, the exact first
// message to give Claude Code, what `hook install --commands` writes, `ralph hook uninstall`, and a report with
// no made-up 0.0s or $0.0000.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { cleanEnv, RALPH, resultOf, runRalph, tempProjects, type CliResult } from "../helpers/cli.js";

const project = tempProjects("ralph-hook-round-");

function terminalEnv(): NodeJS.ProcessEnv {
  const env = cleanEnv();
  delete env.CLAUDE_CODE_SESSION_ID;
  delete env.CLAUDE_PROJECT_DIR;
  return env;
}

/** `ralph hook handle` given one Stop hook input, as Claude Code gives it. */
async function stop(dir: string, message: string): Promise<CliResult> {
  const input = JSON.stringify({
    session_id: "session-round-1",
    transcript_path: "/nonexistent",
    cwd: dir,
    hook_event_name: "Stop",
    stop_hook_active: false,
    last_assistant_message: message,
  });
  const child = spawn(process.execPath, [RALPH, "hook", "handle"], {
    cwd: dir,
    env: terminalEnv(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(input);
  return resultOf(child);
}

test("ralph hook --help reads as a command line, and names uninstall", async () => {
  const help = await runRalph(["hook", "--help"], project());
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: ralph hook <subcommand> \[options\]$/m);
  assert.doesNotMatch(help.stdout, /\[command\] \[subcommand\]/);
  assert.match(help.stdout, /^ {2}uninstall\s/m);
});

test("hook start from a terminal prints the exact first message to give claude, quoted for the shell", async () => {
  const dir = project();
  const started = await runRalph(["hook", "start", "fix the tests; don't touch $HOME"], dir, terminalEnv());
  assert.equal(started.code, 0, started.stderr);
  assert.match(
    started.stdout,
    /^next: start Claude Code here with the task as its first message:\n {2}claude 'fix the tests; don'\\''t touch \$HOME'$/m,
  );
});

test("ralph hook uninstall cancels the loop, takes the Stop hook out and removes only the command files ralph wrote", async () => {
  const dir = project();
  assert.equal((await runRalph(["hook", "install", "--commands"], dir, terminalEnv())).code, 0);
  assert.equal((await runRalph(["hook", "start", "go"], dir, terminalEnv())).code, 0);
  const settings = join(dir, ".claude", "settings.local.json");
  // A setting of the person's own, beside ralph's hook, and a command file of theirs under one of ralph's names.
  const mine = JSON.parse(readFileSync(settings, "utf8")) as Record<string, unknown>;
  writeFileSync(settings, JSON.stringify({ ...mine, model: "mine" }));
  writeFileSync(join(dir, ".claude", "commands", "ralph-help.md"), "my own help\n");
  const removed = await runRalph(["hook", "uninstall"], dir, terminalEnv());
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /^ralph: in-session loop cancelled at iteration 1/m);
  assert.match(removed.stdout, /^ralph: Stop hook removed from \.claude\/settings\.local\.json$/m);
  assert.match(removed.stdout, /^ralph: \.claude\/commands\/ralph-help\.md kept: it is not the one ralph wrote$/m);
  const left = JSON.parse(readFileSync(settings, "utf8")) as Record<string, unknown>;
  assert.equal(left.model, "mine");
  assert.doesNotMatch(JSON.stringify(left), /hook handle/);
  assert.equal(existsSync(join(dir, ".claude", "commands", "ralph-loop.md")), false);
  assert.equal(existsSync(join(dir, ".claude", "commands", "cancel-ralph.md")), false);
  assert.equal(readFileSync(join(dir, ".claude", "commands", "ralph-help.md"), "utf8"), "my own help\n");
  // Uninstalled, a stop is let through: nothing blocks.
  assert.equal((await stop(dir, "done")).stdout, "");
  // Twice: nothing left to do, and it says so.
  assert.match(
    (await runRalph(["hook", "uninstall"], dir, terminalEnv())).stdout,
    /^ralph: no Stop hook of ralph's in this project: nothing to uninstall\n$/,
  );
});

test("a hook run's report shows measured durations or –, never 0.0s, and says no cost was reported, never $0.0000", async () => {
  const dir = project();
  assert.equal((await runRalph(["hook", "start", "go", "-n", "3"], dir, terminalEnv())).code, 0);
  for (const message of ["first try", "second try", "third try"]) assert.equal((await stop(dir, message)).code, 0);
  const report = await runRalph(["report"], dir, terminalEnv());
  assert.equal(report.code, 0, report.stderr);
  assert.doesNotMatch(report.stdout, /0\.0s|\$0\.0000/, report.stdout);
  assert.match(report.stdout, /^\| Cost \| no cost reported \|$/m);
  const rows = report.stdout.split("\n").filter((line) => /^\| \d+ \|/.test(line));
  assert.equal(rows.length, 3, report.stdout);
  // The first iteration began when the person gave claude its first message: ralph did not see when.
  assert.match(rows[0] ?? "", /^\| 1 \| \w+ \| – \|/);
  for (const row of rows.slice(1)) assert.match(row, /^\| \d \| \w+ \| \d+\.\d+s \|/);
});

test("ralph hook --help names the file install really writes, .claude/settings.local.json", async () => {
  const help = await runRalph(["hook", "--help"], project());
  assert.equal(help.code, 0, help.stderr);
  assert.match(
    help.stdout.replace(/\s+/g, " "),
    /install \[options\] add the Stop hook to \.claude\/settings\.local\.json/,
  );
  assert.doesNotMatch(help.stdout, /settings\.json/);
});

test("ralph hook start from a terminal says what to do next and keeps .ralph/ out of git", async () => {
  const dir = project();
  const env = cleanEnv();
  delete env.CLAUDE_CODE_SESSION_ID;
  const started = await runRalph(["hook", "start", "fix", "the", "tests"], dir, env);
  assert.equal(started.code, 0, started.stderr);
  assert.match(
    started.stdout,
    /^next: start Claude Code here with the task as its first message:\n {2}claude 'fix the tests'$/m,
  );
  assert.ok(readFileSync(join(dir, ".gitignore"), "utf8").split("\n").includes(".ralph/"));
  // From inside a session (/ralph-loop) the session is already there: no such advice for the model.
  const inside = project();
  const bound = await runRalph(["hook", "start", "go"], inside, cleanEnv({ CLAUDE_CODE_SESSION_ID: "session-1234" }));
  assert.equal(bound.code, 0, bound.stderr);
  assert.doesNotMatch(bound.stdout, /^next:/m);
});

test("hook install --commands names ralph from PATH when that is this ralph; else this machine's paths, kept out of git", async () => {
  const dir = project();
  const bin = join(dir, "bin");
  mkdirSync(bin);
  symlinkSync(RALPH, join(bin, "ralph"));
  // npm marks a package's bin executable when it installs it; the build output may not be.
  chmodSync(RALPH, statSync(RALPH).mode | 0o111);
  const onPath = await runRalph(
    ["hook", "install", "--commands"],
    dir,
    cleanEnv({ PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` }),
  );
  assert.equal(onPath.code, 0, onPath.stderr);
  assert.match(onPath.stdout, /run `ralph` from PATH: they can be committed/);
  const loop = readFileSync(join(dir, ".claude", "commands", "ralph-loop.md"), "utf8");
  assert.match(loop, /^ralph hook start --stdin <<'RALPH_ARGS_/m);
  assert.ok(!loop.includes(process.execPath) && !loop.includes(RALPH), loop);
  assert.doesNotMatch(readFileSync(join(dir, ".gitignore"), "utf8"), /commands/);

  const other = project();
  const off = await runRalph(["hook", "install", "--commands"], other, cleanEnv({ PATH: "/usr/bin:/bin" }));
  assert.equal(off.code, 0, off.stderr);
  assert.match(
    off.stdout,
    /ralph is not on PATH here, so the commands name this machine's node and ralph; they stay out of git/,
  );
  assert.ok(readFileSync(join(other, ".claude", "commands", "ralph-loop.md"), "utf8").includes(RALPH));
  const ignored = readFileSync(join(other, ".gitignore"), "utf8").split("\n");
  for (const name of ["ralph-loop.md", "cancel-ralph.md", "ralph-help.md"])
    assert.ok(ignored.includes(`.claude/commands/${name}`), ignored.join(","));
});
