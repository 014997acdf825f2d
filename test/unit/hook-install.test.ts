// `ralph hook install`: one Stop hook entry however often it runs, every other setting and hook intact.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installStopHook, isRalphHandleCommand } from "../../src/hook/install-hook.js";
import { shellCommandLine } from "../../src/util/shell-words.js";
import { RALPH, runRalph, tempProject } from "../helpers/cli.js";

const root = mkdtempSync(join(tmpdir(), "ralph-hook-install-"));
after(() => rmSync(root, { recursive: true, force: true }));
let count = 0;

function settingsFile(initial?: unknown): string {
  count += 1;
  const dir = join(root, `p${count}`, ".claude");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "settings.json");
  if (initial !== undefined)
    writeFileSync(file, typeof initial === "string" ? initial : JSON.stringify(initial, null, 2));
  return file;
}

const COMMAND = "/usr/bin/node /opt/ralph/dist/src/cli/main.js hook handle";
const EXISTING = {
  model: "opus",
  permissions: { allow: ["Bash(npm test:*)"] },
  env: { FOO: "bar" },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh" }] }],
    Stop: [{ hooks: [{ type: "command", command: "./notify.sh" }] }],
  },
};

function stopHooks(file: string): Array<{ command: string }> {
  const settings = JSON.parse(readFileSync(file, "utf8")) as {
    hooks: { Stop: Array<{ hooks: Array<{ command: string }> }> };
  };
  return settings.hooks.Stop.flatMap((group) => group.hooks);
}

describe("hook install", () => {
  test("twice: one ralph entry, every pre-existing setting and hook intact, second run changes nothing", () => {
    const file = settingsFile(EXISTING);
    assert.deepEqual(installStopHook(file, COMMAND), { ok: true, changed: true, file });
    const once = readFileSync(file, "utf8");
    assert.deepEqual(installStopHook(file, COMMAND), { ok: true, changed: false, file });
    assert.equal(readFileSync(file, "utf8"), once);
    const settings = JSON.parse(once) as typeof EXISTING;
    assert.deepEqual({ ...settings, hooks: { ...settings.hooks, Stop: settings.hooks.Stop.slice(0, 1) } }, EXISTING);
    assert.deepEqual(
      stopHooks(file).map((hook) => hook.command),
      ["./notify.sh", COMMAND],
    );
  });

  test("a missing file (and .claude directory) is created", () => {
    const file = join(root, "fresh", ".claude", "settings.json");
    assert.equal(installStopHook(file, COMMAND).ok, true);
    assert.deepEqual(
      stopHooks(file).map((hook) => hook.command),
      [COMMAND],
    );
  });

  test("an old ralph entry (ralph moved) is replaced, not duplicated; its group's other hooks stay", () => {
    const old = "'/old node/bin/node' /old/ralph/dist/src/cli/main.js hook handle";
    const file = settingsFile({
      hooks: {
        Stop: [
          {
            hooks: [
              { type: "command", command: "./a.sh" },
              { type: "command", command: old },
            ],
          },
          { hooks: [{ type: "command", command: "ralph hook handle" }] },
        ],
      },
    });
    assert.equal(installStopHook(file, COMMAND).ok, true);
    assert.deepEqual(
      stopHooks(file).map((hook) => hook.command),
      ["./a.sh", COMMAND],
    );
  });

  for (const [name, text, expected] of [
    ["invalid JSON", '{ "model": "opus", }', /is not valid JSON/],
    ["a JSON list", "[1, 2]", /does not hold a JSON object/],
    ["hooks that are not an object", JSON.stringify({ hooks: [] }), /"hooks" is not an object/],
    ["hooks.Stop that is not a list", JSON.stringify({ hooks: { Stop: {} } }), /"hooks.Stop" is not a list/],
  ] as const) {
    test(`${name}: an error, and the file is never overwritten`, () => {
      const file = settingsFile(text);
      const result = installStopHook(file, COMMAND);
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.message, expected);
      assert.equal(readFileSync(file, "utf8"), text);
    });
  }

  test("recognises ralph's handler commands only", () => {
    assert.equal(isRalphHandleCommand(COMMAND), true);
    assert.equal(isRalphHandleCommand("ralph hook handle"), true);
    assert.equal(isRalphHandleCommand("'/x y/node' '/a b/main.js' hook handle"), true);
    // The entry since the CLI became CommonJS: an install replaces the old entry with it.
    assert.equal(isRalphHandleCommand("'/x y/node' '/a b/main.cjs' hook handle"), true);
    assert.equal(isRalphHandleCommand("./notify.sh"), false);
    assert.equal(isRalphHandleCommand("other-tool hook handle"), false);
    assert.equal(isRalphHandleCommand(undefined), false);
  });

  test("the CLI: install twice keeps one entry in settings.local.json whose command runs this ralph by absolute paths, quoted for the shell", async () => {
    const { dir, cleanup } = tempProject("ralph-hook-install-cli-");
    after(cleanup);
    mkdirSync(join(dir, ".claude"));
    const local = join(dir, ".claude", "settings.local.json");
    writeFileSync(local, JSON.stringify(EXISTING));
    chmodSync(local, 0o640);
    for (const expected of [
      /Stop hook installed in \.claude\/settings\.local\.json/,
      /Stop hook already in \.claude\/settings\.local\.json/,
    ]) {
      const result = await runRalph(["hook", "install"], dir);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, expected);
    }
    assert.deepEqual(
      stopHooks(local).map((hook) => hook.command),
      ["./notify.sh", shellCommandLine([process.execPath, RALPH, "hook", "handle"])],
    );
    assert.equal(statSync(local).mode & 0o777, 0o640, "the file keeps its mode");
    assert.ok(!existsSync(join(dir, ".claude", "settings.json")), "the shared settings file is not created");
    assert.deepEqual(readFileSync(join(dir, ".gitignore"), "utf8").split("\n"), [
      ".claude/settings.local.json",
      ".claude/ralph-loop.local.md",
      ".claude/ralph-loop.local.lock",
      ".ralph/",
      "",
    ]);

    writeFileSync(local, "not json");
    const broken = await runRalph(["hook", "install"], dir);
    assert.equal(broken.code, 2);
    assert.equal(broken.stderr.trim().split("\n").length, 1, broken.stderr);
    assert.equal(readFileSync(local, "utf8"), "not json");
  });

  test("an entry an older ralph put in the shared settings.json moves to settings.local.json; everything else there stays", async () => {
    const { dir, cleanup } = tempProject("ralph-hook-move-");
    after(cleanup);
    mkdirSync(join(dir, ".claude"));
    const shared = join(dir, ".claude", "settings.json");
    const old = {
      ...EXISTING,
      hooks: {
        ...EXISTING.hooks,
        Stop: [...EXISTING.hooks.Stop, { hooks: [{ type: "command", command: COMMAND, timeout: 1800 }] }],
      },
    };
    writeFileSync(shared, JSON.stringify(old, null, 2));
    writeFileSync(join(dir, ".gitignore"), "node_modules/\n.claude/ralph-loop.local.md\n");
    const result = await runRalph(["hook", "install"], dir);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /moved ralph's entry out of \.claude\/settings\.json \(your other settings there are unchanged\)/,
    );
    assert.deepEqual(JSON.parse(readFileSync(shared, "utf8")), EXISTING);
    assert.deepEqual(
      stopHooks(join(dir, ".claude", "settings.local.json")).map((hook) => hook.command),
      [shellCommandLine([process.execPath, RALPH, "hook", "handle"])],
    );
    assert.equal(
      readFileSync(join(dir, ".gitignore"), "utf8"),
      "node_modules/\n.claude/ralph-loop.local.md\n.claude/settings.local.json\n.claude/ralph-loop.local.lock\n.ralph/\n",
    );
    // A shared file holding nothing but ralph's hook keeps its other keys and loses the empty hooks object.
    writeFileSync(
      shared,
      JSON.stringify({ model: "opus", hooks: { Stop: [{ hooks: [{ type: "command", command: COMMAND }] }] } }),
    );
    assert.equal((await runRalph(["hook", "install"], dir)).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(shared, "utf8")), { model: "opus" });
  });

  test("--commands writes the three slash commands; /ralph-loop passes $ARGUMENTS through a quoted here-document", async () => {
    const { dir, cleanup } = tempProject("ralph-hook-commands-");
    after(cleanup);
    const result = await runRalph(["hook", "install", "--commands"], dir);
    assert.equal(result.code, 0, result.stderr);
    const commands = join(dir, ".claude", "commands");
    for (const name of ["ralph-loop.md", "cancel-ralph.md", "ralph-help.md"])
      assert.ok(existsSync(join(commands, name)), name);
    const loop = readFileSync(join(commands, "ralph-loop.md"), "utf8");
    const cli = shellCommandLine([process.execPath, RALPH]);
    const delimiter = /<<'(RALPH_ARGS_[0-9a-f]{16})'/.exec(loop)?.[1];
    assert.ok(delimiter, "a random here-document delimiter");
    assert.ok(
      loop.includes(`\`\`\`!\n${cli} hook start --stdin <<'${delimiter}'\n$ARGUMENTS\n${delimiter}\n\`\`\``),
      loop,
    );
    assert.match(loop, /^allowed-tools: .*Bash\(.* hook start --stdin:\*\)/m);
    assert.match(loop, /^description: /m);
    assert.match(readFileSync(join(commands, "cancel-ralph.md"), "utf8"), / hook cancel\n```/);
    const help = readFileSync(join(commands, "ralph-help.md"), "utf8");
    for (const topic of [
      /max-iterations/,
      /default is 3; 0 means unlimited/,
      /completion-promise/,
      /--check/,
      /cancel-ralph/,
      /[Qq]uot/,
    ])
      assert.match(help, topic);
    const again = await runRalph(["hook", "install", "--commands"], dir);
    assert.match(again.stdout, /ralph-loop\.md up to date/);
  });
});
