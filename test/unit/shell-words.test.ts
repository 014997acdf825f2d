// Shell-like splitting of `ralph hook start --stdin` arguments, and quoting of the hook's command line.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { quoteShellWord, shellCommandLine, splitShellWords } from "../../src/util/shell-words.js";

function words(text: string): string[] {
  const result = splitShellWords(text);
  assert.ok(result.ok, result.ok ? "" : result.message);
  return result.words;
}

describe("splitShellWords", () => {
  const cases: Array<[string, string[]]> = [
    ["Fix the bug", ["Fix", "the", "bug"]],
    ["  spaces\tand\n newlines  \n", ["spaces", "and", "newlines"]],
    ['--completion-promise "ALL TESTS PASS" -n 5', ["--completion-promise", "ALL TESTS PASS", "-n", "5"]],
    ["--completion-promise 'ALL DONE'", ["--completion-promise", "ALL DONE"]],
    ['--completion-promise="two words"', ["--completion-promise=two words"]],
    ["see https://x.test/a?param=1&x=y now", ["see", "https://x.test/a?param=1&x=y", "now"]],
    ["no * glob ? here [a-z]", ["no", "*", "glob", "?", "here", "[a-z]"]],
    ["$HOME ${USER} $(rm -rf /) `id` ~", ["$HOME", "${USER}", "$(rm", "-rf", "/)", "`id`", "~"]],
    ["a;b | c > d && e # f", ["a;b", "|", "c", ">", "d", "&&", "e", "#", "f"]],
    ['"double \\"quoted\\" \\$x \\\\ \\n"', ['double "quoted" $x \\ \\n']],
    ["'single \\ keeps \"all\"'", ['single \\ keeps "all"']],
    ["don\\'t stop", ["don't", "stop"]],
    ['"don\'t" stop', ["don't", "stop"]],
    ["'it'\\''s'", ["it's"]],
    ['empty "" word', ["empty", "", "word"]],
    ["line \\\ncontinued", ["line", "continued"]],
    ["", []],
  ];
  for (const [input, expected] of cases) {
    test(JSON.stringify(input), () => assert.deepEqual(words(input), expected));
  }

  test("an unterminated quote is an error that says how to fix it", () => {
    const result = splitShellWords("Fix the user's login");
    assert.equal(result.ok, false);
    assert.match(result.ok ? "" : result.message, /unterminated ' quote on line 1 near .*user's login.*\\'/);
    assert.equal(splitShellWords('say "hi').ok, false);
  });

  test("agrees with a real shell on quoting (no expansion involved)", () => {
    const text = `a "b c" 'd "e"' f\\ g "h\\"i" 'j'\\''k' "l\\\\m"`;
    const shell = spawnSync("/bin/sh", ["-c", `for w in ${text}; do printf '%s\\n' "$w"; done`], { encoding: "utf8" });
    assert.deepEqual(words(text), shell.stdout.trimEnd().split("\n"));
  });
});

describe("quoteShellWord", () => {
  test("round-trips through a real shell, whatever the characters", () => {
    const awkward = [
      "/plain/path",
      "/path with spaces/node",
      "it's",
      "$HOME",
      'a"b',
      "back\\slash",
      "*?[x]",
      "semi;colon",
      "new\nline",
      "",
    ];
    const shell = spawnSync(
      "/bin/sh",
      ["-c", `for w in ${awkward.map(quoteShellWord).join(" ")}; do printf '%s\\0' "$w"; done`],
      { encoding: "utf8" },
    );
    assert.deepEqual(shell.stdout.split("\0").slice(0, -1), awkward);
    assert.equal(quoteShellWord("/usr/bin/node"), "/usr/bin/node");
    assert.equal(shellCommandLine(["/a b/node", "x"]), "'/a b/node' x");
  });
});
