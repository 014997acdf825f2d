// A guide page that names an option's default (`--linger` later (default 10s)) names the declared one: the
// pages are written by hand, so a default changed in config/run-options.ts must not leave them saying the old.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { RUN_OPTION_SPECS, type OptionSpec } from "../../src/config/run-options.js";
import type { OptionType } from "../../src/config/option-types.js";

const root = new URL("../../../", import.meta.url);

/** The hand-written Markdown: the README, CONTRIBUTING and the guide pages (docs/reference/ is generated). */
function pages(): Array<{ path: string; text: string }> {
  const paths = ["README.md", "CONTRIBUTING.md", ...readdirSync(new URL("docs/", root)).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];
  paths.push(...readdirSync(new URL("docs/internals/", root)).filter((name) => name.endsWith(".md")).map((name) => `docs/internals/${name}`));
  return paths.map((path) => ({ path, text: readFileSync(new URL(path, root), "utf8") }));
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Each place in `text` that gives `spec`'s default in words (a code span naming the flag, then "(default X"), with the X it gives. */
function statedDefaults(text: string, spec: OptionSpec): string[] {
  const pattern = new RegExp(`\`[^\`\\n]*${escape(spec.flag)}(?![a-z-])[^\`\\n]*\`[^(.\\n\`]{0,24}\\(default \`?([^,;)\`]+)`, "g");
  return [...text.matchAll(pattern)].map((match) => (match[1] ?? "").trim());
}

/** Where the pages say a default other than the declared one: `page: --flag says X, declared Y`. */
function drifted(texts: Array<{ path: string; text: string }>, specs: readonly OptionSpec[]): string[] {
  const found: string[] = [];
  for (const spec of specs) {
    const declared = (spec.type as OptionType<unknown>).show(spec.defaultValue) ?? "off";
    for (const { path, text } of texts) {
      for (const stated of statedDefaults(text, spec)) if (stated !== declared) found.push(`${path}: ${spec.flag} says ${stated}, declared ${declared}`);
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
  const changed = RUN_OPTION_SPECS.map((spec) => (spec.key === "lingerMs" ? ({ ...spec, defaultValue: 20_000 } as OptionSpec) : spec));
  assert.deepEqual(
    drifted(texts, changed).map((line) => line.replace(/^[^:]+: /, "")),
    ["--linger says 10s, declared 20s"],
  );
  const made = [{ path: "x.md", text: "Give `-n/--max-iterations` (default 4, 0 = unlimited) and `--max-wait DUR` (default `0`)." }];
  assert.deepEqual(drifted(made, RUN_OPTION_SPECS), ["x.md: --max-iterations says 4, declared 3"]);
});
