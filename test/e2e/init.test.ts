// `ralph init`: its ralph.yaml carries the declared defaults, names every criterion type, and makes the
// project's own test command (npm test, pytest, cargo test, go test, make test) its check; its scaffold is
// coherent, and what it writes stays 0644/0755 at most under umask 000.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { runOption } from "../../src/config/run-options.js";
import { RALPH, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-init-");

async function init(
  files: Record<string, string>,
): Promise<{ stdout: string; yaml: Record<string, unknown>; text: string }> {
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
    [{ "pyproject.toml": '[tool.pytest.ini_options]\nminversion = "6.0"\n' }, "pytest"],
    [{ "Cargo.toml": '[package]\nname = "x"\n' }, "cargo test"],
    [{ "go.mod": "module example.com/x\n" }, "go test ./..."],
    [{ Makefile: "build:\n\ttrue\ntest: build\n\ttrue\n" }, "make test"],
  ];
  for (const [files, command] of cases) {
    const { stdout, yaml } = await init(files);
    assert.deepEqual(yaml.completion_criteria, [{ type: "command", check: command }], JSON.stringify(files));
    assert.match(stdout, new RegExp(`^created  ralph\\.yaml \\(check: ${command.replace(/\./g, "\\.")}, from `, "m"));
  }
  // Known-false controls: npm init's placeholder script and a Makefile without a test target are no tests.
  const controls: Array<Record<string, string>> = [
    { "package.json": JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }) },
    { Makefile: "build:\n\ttrue\n" },
  ];
  for (const files of controls) {
    const { yaml } = await init(files);
    assert.equal(yaml.completion_criteria, undefined, JSON.stringify(files));
  }
});

test("the ralph.yaml ralph init writes is read back without a word, its check included", async () => {
  const dir = project();
  writeFileSync(join(dir, "go.mod"), "module example.com/x\n");
  assert.equal((await runRalph(["init"], dir)).code, 0);
  const dry = await runRalph(
    ["run", "--dry-run", "--dry-run-delay", "0", "-n", "1", "--preflight", "off", "go", "--", "true"],
    dir,
  );
  assert.notEqual(dry.code, 2, dry.stderr);
  assert.doesNotMatch(dry.stderr, /ralph\.yaml/);
});

test("ralph init and hook install create files 0644 and directories 0755 at most under umask 000", () => {
  const dir = project();
  const underUmask000 = (...args: string[]) =>
    spawnSync("sh", ["-c", 'umask 000; exec "$@"', "sh", process.execPath, RALPH, ...args], {
      cwd: dir,
      encoding: "utf8",
    });
  // Known-false control: the harness really runs with umask 000.
  spawnSync("sh", ["-c", "umask 000; touch probe"], { cwd: dir });
  assert.equal(statSync(join(dir, "probe")).mode & 0o777, 0o666);
  assert.equal(underUmask000("init").status, 0);
  assert.equal(underUmask000("hook", "install").status, 0);
  const created = [
    "PROMPT.md",
    "ralph.yaml",
    "TASKS.md",
    ".gitignore",
    ...walk(join(dir, ".claude")).map((path) => path.slice(dir.length + 1)),
  ];
  assert.ok(
    created.some((path) => path.startsWith(".claude/")),
    created.join(" "),
  );
  for (const path of created) {
    const mode = statSync(join(dir, path)).mode & 0o777;
    assert.equal(mode & 0o022, 0, `${path} is ${mode.toString(8)}`);
  }
});

function walk(dir: string): string[] {
  return [
    dir,
    ...readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
    ),
  ];
}

describe("ralph init", () => {
  test("a coherent scaffold: no active placeholder task, a valid ralph.yaml, and the next command printed", async () => {
    const dir = project();
    const init = await runRalph(["init"], dir);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /^next: write the task into PROMPT\.md, then start the loop:\n {2}ralph run /m);
    // An ad-hoc run carries exactly its own prompt: no task from a scaffolded list is appended.
    const adHoc = await runRalph(
      ["run", "--name", "adhoc", "--dry-run", "--dry-run-delay", "0", "-n", "1", "ad hoc"],
      dir,
    );
    assert.equal(adHoc.code, 0, adHoc.stderr);
    assert.match(adHoc.stdout, /dry run: the prompt \(6 characters\):\n {2}\| ad hoc\n\[1\/1\]/);
    assert.match(adHoc.stdout, /with the claude agent \(max 1 iteration\)/);
    // Without words the run takes PROMPT.md and the defaults of ralph.yaml (the promise).
    const fromFile = await runRalph(["run", "--name", "file", "--dry-run", "--dry-run-delay", "0", "-n", "1"], dir);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.match(
      fromFile.stdout,
      /\| When the whole task is done and the tests pass, end your final message with <promise>DONE<\/promise>\./,
    );
    assert.doesNotMatch(fromFile.stdout, /Current task/);
    assert.match(readFileSync(join(dir, "ralph.yaml"), "utf8"), /^# completion_criteria:/m);
    assert.match(readFileSync(join(dir, ".gitignore"), "utf8"), /^\.ralph\/$/m);
  });
});
