// A newcomer's first in-session loop: what ralph hook says and writes before Claude Code ever runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { cleanEnv, RALPH, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-first-hook-");

test("ralph hook --help names the file install really writes, .claude/settings.local.json", async () => {
  const help = await runRalph(["hook", "--help"], project());
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout.replace(/\s+/g, " "), /install \[options\] add the Stop hook to \.claude\/settings\.local\.json/);
  assert.doesNotMatch(help.stdout, /settings\.json/);
});

test("ralph hook start from a terminal says what to do next and keeps .ralph/ out of git", async () => {
  const dir = project();
  const env = cleanEnv();
  delete env.CLAUDE_CODE_SESSION_ID;
  const started = await runRalph(["hook", "start", "fix", "the", "tests"], dir, env);
  assert.equal(started.code, 0, started.stderr);
  assert.match(started.stdout, /^next: start Claude Code here with the task as its first message:\n {2}claude 'fix the tests'$/m);
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
  const onPath = await runRalph(["hook", "install", "--commands"], dir, cleanEnv({ PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` }));
  assert.equal(onPath.code, 0, onPath.stderr);
  assert.match(onPath.stdout, /run `ralph` from PATH: they can be committed/);
  const loop = readFileSync(join(dir, ".claude", "commands", "ralph-loop.md"), "utf8");
  assert.match(loop, /^ralph hook start --stdin <<'RALPH_ARGS_/m);
  assert.ok(!loop.includes(process.execPath) && !loop.includes(RALPH), loop);
  assert.doesNotMatch(readFileSync(join(dir, ".gitignore"), "utf8"), /commands/);

  const other = project();
  const off = await runRalph(["hook", "install", "--commands"], other, cleanEnv({ PATH: "/usr/bin:/bin" }));
  assert.equal(off.code, 0, off.stderr);
  assert.match(off.stdout, /ralph is not on PATH here, so the commands name this machine's node and ralph; they stay out of git/);
  assert.ok(readFileSync(join(other, ".claude", "commands", "ralph-loop.md"), "utf8").includes(RALPH));
  const ignored = readFileSync(join(other, ".gitignore"), "utf8").split("\n");
  for (const name of ["ralph-loop.md", "cancel-ralph.md", "ralph-help.md"]) assert.ok(ignored.includes(`.claude/commands/${name}`), ignored.join(","));
});
