// `ralph init`: its ralph.yaml carries the declared defaults, names every criterion type, and makes the
// project's own test command (npm test, pytest, cargo test, go test, make test) its check.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { runOption } from "../../src/config/run-options.js";
import { runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-init-");

async function init(files: Record<string, string>): Promise<{ stdout: string; yaml: Record<string, unknown>; text: string }> {
  const dir = project();
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const result = await runRalph(["init"], dir);
  assert.equal(result.code, 0, result.stderr);
  const text = readFileSync(join(dir, "ralph.yaml"), "utf8");
  return { stdout: result.stdout, yaml: parse(text) as Record<string, unknown>, text };
}

test("ralph init writes the declared defaults (max_iterations 3, not 10) and names review among the criterion types", async () => {
  const { yaml, text } = await init({});
  assert.equal(yaml.max_iterations, runOption("maxIterations").defaultValue);
  assert.equal(yaml.max_iterations, 3);
  assert.equal(yaml.timeout, "30m");
  assert.equal(yaml.completion_criteria, undefined, "no test command: the criteria stay a comment");
  assert.match(text, /types: command, file_exists, no_files, tasks_done, review/);
  assert.match(text, /^# {3}- \{type: review, agent: claude\}/m);
});

test("ralph init offers the project's own test command as its check", async () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ "package.json": JSON.stringify({ scripts: { test: "node --test" } }) }, "npm test"],
    [{ "pyproject.toml": "[tool.pytest.ini_options]\nminversion = \"6.0\"\n" }, "pytest"],
    [{ "Cargo.toml": "[package]\nname = \"x\"\n" }, "cargo test"],
    [{ "go.mod": "module example.com/x\n" }, "go test ./..."],
    [{ Makefile: "build:\n\ttrue\ntest: build\n\ttrue\n" }, "make test"],
  ];
  for (const [files, command] of cases) {
    const { stdout, yaml } = await init(files);
    assert.deepEqual(yaml.completion_criteria, [{ type: "command", check: command }], JSON.stringify(files));
    assert.match(stdout, new RegExp(`^created  ralph\\.yaml \\(check: ${command.replace(/\./g, "\\.")}, from `, "m"));
  }
  // Known-false controls: npm init's placeholder script and a Makefile without a test target are no tests.
  const controls: Array<Record<string, string>> = [{ "package.json": JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }) }, { Makefile: "build:\n\ttrue\n" }];
  for (const files of controls) {
    const { yaml } = await init(files);
    assert.equal(yaml.completion_criteria, undefined, JSON.stringify(files));
  }
});

test("the ralph.yaml ralph init writes is read back without a word, its check included", async () => {
  const dir = project();
  writeFileSync(join(dir, "go.mod"), "module example.com/x\n");
  assert.equal((await runRalph(["init"], dir)).code, 0);
  const dry = await runRalph(["run", "--dry-run", "--dry-run-delay", "0", "-n", "1", "--preflight", "off", "go", "--", "true"], dir);
  assert.notEqual(dry.code, 2, dry.stderr);
  assert.doesNotMatch(dry.stderr, /ralph\.yaml/);
});
