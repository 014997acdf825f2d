// Placeholders (src/sandbox/placeholder.ts): a path the sandbox keeps read-only is made empty where it is
// missing, once, the same way for git's paths and the agent CLIs'; nothing that exists is written to or
// through. The attack: a `.git/config.worktree` left as a link to a place of the agent's choosing, which a
// placeholder written through would create there. The known-false control: an append through the link
// (what a placeholder made with `flag: "a"` does) creates its target.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentState } from "../../src/sandbox/agent-state.js";
import { bwrapOptions } from "../../src/sandbox/bwrap-argv.js";
import { ensurePlaceholder } from "../../src/sandbox/placeholder.js";

const made: string[] = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "ralph-placeholder-"));
  made.push(dir);
  return dir;
}

function walls(work: string) {
  return {
    workDir: work,
    projectDir: work,
    home: work,
    writeAllow: [],
    agentState: { writable: [], readOnly: [] },
    readDeny: [],
    socket: null,
    programs: [],
  };
}

test("a missing git path gets an empty placeholder; an existing one is left as it is", () => {
  const root = scratch();
  const work = join(root, "work");
  assert.equal(spawnSync("git", ["init", "-q", work]).status, 0);
  writeFileSync(join(work, ".git", "config.worktree"), "[core]\n");
  rmSync(join(work, ".git", "hooks"), { recursive: true, force: true });
  const options = bwrapOptions(walls(work));
  assert.equal(statSync(join(work, ".git", "hooks")).isDirectory(), true);
  assert.equal(readFileSync(join(work, ".git", "objects", "info", "alternates"), "utf8"), "");
  assert.equal(readFileSync(join(work, ".git", "config.worktree"), "utf8"), "[core]\n");
  assert.ok(options.includes(join(work, ".git", "hooks")));
});

test("a git path that is a link to nowhere is not written through: nothing is created where it points", () => {
  const root = scratch();
  const work = join(root, "work");
  assert.equal(spawnSync("git", ["init", "-q", work]).status, 0);
  const target = join(root, "chosen-by-the-agent");
  symlinkSync(target, join(work, ".git", "config.worktree"));
  bwrapOptions(walls(work));
  assert.equal(existsSync(target), false, "the placeholder was written through the link");
});

test("control: an append through such a link creates its target", () => {
  const root = scratch();
  const target = join(root, "chosen-by-the-agent");
  symlinkSync(target, join(root, "link"));
  writeFileSync(join(root, "link"), "", { flag: "a" });
  assert.equal(existsSync(target), true);
});

test("the agent CLIs' placeholders: `{}` for JSON, private modes, and made once (a second call changes nothing)", () => {
  const home = scratch();
  const first = agentState("claude", home);
  const settings = join(home, ".claude", "settings.json");
  assert.ok(first.readOnly.includes(settings));
  assert.equal(readFileSync(settings, "utf8"), "{}\n");
  assert.equal(statSync(settings).mode & 0o777, 0o600);
  assert.equal(statSync(join(home, ".claude", "hooks")).mode & 0o777, 0o700);
  writeFileSync(settings, '{"model":"x"}\n');
  assert.deepEqual(agentState("claude", home), first);
  assert.equal(readFileSync(settings, "utf8"), '{"model":"x"}\n');
});

test("ensurePlaceholder: made where missing, true where present, false for a link to nowhere", () => {
  const root = scratch();
  assert.equal(ensurePlaceholder(join(root, "a", "b.json"), { kind: "file", content: "{}\n" }), true);
  assert.equal(readFileSync(join(root, "a", "b.json"), "utf8"), "{}\n");
  assert.equal(ensurePlaceholder(join(root, "a", "b.json"), { kind: "file", content: "other" }), true);
  assert.equal(readFileSync(join(root, "a", "b.json"), "utf8"), "{}\n");
  symlinkSync(join(root, "nowhere"), join(root, "dangling"));
  assert.equal(ensurePlaceholder(join(root, "dangling"), { kind: "directory" }), false);
  assert.equal(existsSync(join(root, "nowhere")), false);
});
