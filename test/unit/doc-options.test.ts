// The guide pages are written by hand, so what they say of an option must follow its declaration
// (config/run-options.ts): a default they name (`--linger` later (default 10s)) is the declared one, and an
// environment variable they name is a declared option's or one the project itself reads or sets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { RUN_OPTION_SPECS, type OptionSpec } from "../../src/config/run-options.js";
import type { OptionType } from "../../src/config/option-types.js";
import type { Command } from "commander";

const root = new URL("../../../", import.meta.url);

/** The hand-written Markdown: the README, CONTRIBUTING and the guide pages (docs/reference/ is generated). */
function pages(): Array<{ path: string; text: string }> {
  const paths = [
    "README.md",
    "CONTRIBUTING.md",
    ...readdirSync(new URL("docs/", root))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/${name}`),
  ];
  paths.push(
    ...readdirSync(new URL("docs/internals/", root))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/internals/${name}`),
  );
  return paths.map((path) => ({ path, text: readFileSync(new URL(path, root), "utf8") }));
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Each place in `text` that gives `spec`'s default in words (a code span naming the flag, then "(default X"), with the X it gives. */
function statedDefaults(text: string, spec: OptionSpec): string[] {
  const pattern = new RegExp(
    `\`[^\`\\n]*${escape(spec.flag)}(?![a-z-])[^\`\\n]*\`[^(.\\n\`]{0,24}\\(default \`?([^,;)\`]+)`,
    "g",
  );
  return [...text.matchAll(pattern)].map((match) => (match[1] ?? "").trim());
}

/** Where the pages say a default other than the declared one: `page: --flag says X, declared Y`. */
function drifted(texts: Array<{ path: string; text: string }>, specs: readonly OptionSpec[]): string[] {
  const found: string[] = [];
  for (const spec of specs) {
    const declared = (spec.type as OptionType<unknown>).show(spec.defaultValue) ?? "off";
    for (const { path, text } of texts) {
      for (const stated of statedDefaults(text, spec))
        if (stated !== declared) found.push(`${path}: ${spec.flag} says ${stated}, declared ${declared}`);
    }
  }
  return found;
}

test("every default a guide page states is the declared default", () => {
  const texts = pages();
  const stated = RUN_OPTION_SPECS.flatMap((spec) => texts.flatMap(({ text }) => statedDefaults(text, spec)));
  // The pages do state defaults (so the check reads something): --linger, --max-wait, -n in hook mode, --max-resolve.
  assert.ok(stated.length >= 4, `found only ${stated.length} stated defaults`);
  assert.deepEqual(drifted(texts, RUN_OPTION_SPECS), []);
});

test("control: a default changed in its declaration is caught where a page still says the old one", () => {
  const texts = pages();
  const changed = RUN_OPTION_SPECS.map((spec) =>
    spec.key === "lingerMs" ? ({ ...spec, defaultValue: 20_000 } as OptionSpec) : spec,
  );
  assert.deepEqual(
    drifted(texts, changed).map((line) => line.replace(/^[^:]+: /, "")),
    ["--linger says 10s, declared 20s"],
  );
  const made = [
    { path: "x.md", text: "Give `-n/--max-iterations` (default 4, 0 = unlimited) and `--max-wait DUR` (default `0`)." },
  ];
  assert.deepEqual(drifted(made, RUN_OPTION_SPECS), ["x.md: --max-iterations says 4, declared 3"]);
});

/** Every RALPH_* name written in the files under `dirs` (the project's own variables: the runner's, the tests', deploy/'s). */
function namesIn(dirs: string[]): Set<string> {
  const names = new Set<string>();
  const walk = (url: URL): void => {
    for (const name of readdirSync(url)) {
      if (name === "node_modules" || name === "clis") continue;
      const child = new URL(name, url);
      if (statSync(child).isDirectory()) walk(new URL(`${name}/`, url));
      else if (/\.(ts|mjs|js|sh|ya?ml)$/.test(name))
        for (const match of readFileSync(child, "utf8").matchAll(/RALPH_[A-Z0-9_]*[A-Z0-9]/g)) names.add(match[0]);
    }
  };
  for (const dir of dirs) walk(new URL(dir, root));
  return names;
}

/** RALPH_* names a page gives that are neither a declared option's variable nor written anywhere in the project. */
function unknownVariables(
  texts: Array<{ path: string; text: string }>,
  specs: readonly OptionSpec[],
  own: Set<string>,
): string[] {
  const declared = new Set(specs.flatMap((spec) => (spec.env === null ? [] : [spec.env])));
  const found: string[] = [];
  for (const { path, text } of texts) {
    for (const match of text.matchAll(/RALPH_[A-Z0-9_]*[A-Z0-9]/g))
      if (!declared.has(match[0]) && !own.has(match[0])) found.push(`${path}: ${match[0]}`);
  }
  return found;
}

test("every RALPH_* variable a guide page names is a declared option's, or one the project reads or sets", () => {
  // An option's variable counts only as declared: a test or script that sets it by name does not keep it alive.
  const options = new Set(RUN_OPTION_SPECS.map((spec) => spec.env));
  const own = new Set([...namesIn(["src/", "test/", "deploy/", "scripts/"])].filter((name) => !options.has(name)));
  const texts = pages();
  assert.deepEqual(unknownVariables(texts, RUN_OPTION_SPECS, own), []);
  // Known-false control: with --task-index renamed in its declaration, the pages that name RALPH_TASK_INDEX are caught.
  const renamed = RUN_OPTION_SPECS.map((spec) =>
    spec.key === "taskIndex" ? ({ ...spec, env: "RALPH_TASK_POSITION" } as OptionSpec) : spec,
  );
  const caught = unknownVariables(texts, renamed, own);
  assert.ok(caught.length > 0 && caught.every((line) => line.endsWith(": RALPH_TASK_INDEX")), caught.join("; "));
});

/** Each command's long flags, by its words (`run`, `hook install`), from the command tree --help prints. */
async function flagsByCommand(): Promise<Map<string, Set<string>>> {
  const { buildProgram } = await import("../../src/cli/program.js");
  const hook = await import("../../src/cli/commands/hook.js");
  const program = buildProgram(null, () => undefined, hook);
  const byCommand = new Map<string, Set<string>>();
  const add = (words: string, command: Command): void => {
    byCommand.set(
      words,
      new Set(["--help", ...command.options.flatMap((option) => (option.long ? [option.long] : []))]),
    );
    for (const sub of command.commands) add(`${words} ${sub.name()}`, sub);
  };
  for (const command of program.commands) add(command.name(), command);
  return byCommand;
}

/** `ralph CMD … --flag` written in a page where CMD has no such flag: `page:line: ralph CMD --flag`. */
function unknownFlags(texts: Array<{ path: string; text: string }>, byCommand: Map<string, Set<string>>): string[] {
  const found: string[] = [];
  let checked = 0;
  for (const { path, text } of texts) {
    text.split("\n").forEach((line, index) => {
      for (const match of line.matchAll(/\bralph ([a-z-]+)(?: ([a-z-]+))?((?: [^`#|,\n]*)?)/g)) {
        const [, first = "", second, after = ""] = match;
        const sub = second !== undefined && byCommand.has(`${first} ${second}`);
        const words = sub ? `${first} ${second}` : first;
        const flags = byCommand.get(words);
        if (!flags) continue;
        // The words after the command, up to `--` (after it come the agent's own), quoted values left out.
        const rest = `${sub || second === undefined ? "" : ` ${second}`}${after}`.split(" -- ")[0] ?? "";
        checked += 1;
        for (const flag of rest.replace(/"[^"]*"|'[^']*'/g, "").matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) {
          if (!flags.has(flag[0])) found.push(`${path}:${index + 1}: ralph ${words} ${flag[0]}`);
        }
      }
    });
  }
  // Nothing read would prove nothing: the pages hold dozens of `ralph CMD …` lines.
  if (texts.length > 1 && checked < 30) found.push(`only ${checked} ralph command lines read`);
  return found;
}

test("every `ralph CMD --flag` a page writes is a flag CMD has", async () => {
  const byCommand = await flagsByCommand();
  const texts = pages();
  assert.deepEqual(unknownFlags(texts, byCommand), []);
  // Known-false controls: a flag of another command, and --max-cost with `continue` declaring it no more.
  const made = [
    { path: "x.md", text: 'ralph stop RUN --json\n`ralph run "go" --notify "./n.sh --channel x" -- ./agent --flag`' },
  ];
  assert.deepEqual(unknownFlags(made, byCommand), ["x.md:1: ralph stop --json"]);
  const without = new Map(byCommand);
  without.set("continue", new Set([...(byCommand.get("continue") ?? [])].filter((flag) => flag !== "--max-cost")));
  assert.ok(unknownFlags(texts, without).some((line) => line.endsWith("ralph continue --max-cost")));
});
