// docs/reference/ and schemas/ are written from the declarations (src/cli/generated-files.ts): the committed
// files are current, and changing one option's default in its declaration changes --help, ralph.yaml's
// schema, the reference pages and init's ralph.yaml alike.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { generatedFiles } from "../../src/cli/generated-files.js";
import { DECLARED, type Declarations } from "../../src/cli/reference.js";
import { addRunOptions } from "../../src/cli/run-flags.js";
import { RUN_OPTION_SPECS, type OptionSpec } from "../../src/config/run-options.js";

const root = new URL("../../../", import.meta.url);

test("every generated file under schemas/ and docs/reference/ is current (npm run schemas writes them)", async () => {
  const files = await generatedFiles();
  assert.ok(Object.keys(files).length >= 10, Object.keys(files).join(", "));
  const stale = Object.entries(files).filter(([path, text]) => {
    try {
      return readFileSync(new URL(path, root), "utf8") !== text;
    } catch {
      return true;
    }
  });
  assert.deepEqual(
    stale.map(([path]) => path),
    [],
    "run npm run schemas and commit the result",
  );
});

/** The declarations with max_iterations defaulting to `value`. */
function withDefault(value: number): Declarations {
  const options = RUN_OPTION_SPECS.map((spec) =>
    spec.key === "maxIterations" ? ({ ...spec, defaultValue: value } as OptionSpec) : spec,
  );
  return { ...DECLARED, options };
}

test("one default changed in its declaration: --help, the ralph.yaml schema and the reference all follow", async () => {
  const changed = await generatedFiles(withDefault(7));
  const help = addRunOptions(new Command("run"), withDefault(7).options).helpInformation();
  assert.match(help, /stop after N iterations with MAX_ITERATIONS\s+\(default 7; 0\s+=\s+unlimited\)/);
  const schema = JSON.parse(changed["schemas/ralph-yaml.schema.json"] ?? "{}") as {
    properties: Record<string, { default?: unknown }>;
  };
  assert.equal(schema.properties.max_iterations?.default, 7);
  assert.match(
    changed["docs/reference/options.md"] ?? "",
    /^\| `-n, --max-iterations <n>` \| `RALPH_MAX_ITERATIONS` \| `max_iterations` \| whole number \| `7` \| stop after N iterations with MAX_ITERATIONS \(default 7; 0 = unlimited\)/m,
  );
  assert.match(changed["docs/reference/commands.md"] ?? "", /\(default\s+7;\s+0\s+=\s+unlimited\)/);
  // Known-false control: the declarations in force say 3, and the files on disk then differ from the changed ones.
  const current = await generatedFiles();
  assert.doesNotMatch(current["docs/reference/commands.md"] ?? "", /\(default\s+7;\s+0\s+=\s+unlimited\)/);
  assert.match(current["docs/reference/commands.md"] ?? "", /\(default\s+3;\s+0\s+=\s+unlimited\)/);
  const differ = Object.keys(changed)
    .filter((path) => changed[path] !== current[path])
    .sort();
  assert.deepEqual(differ, [
    "docs/reference/commands.md",
    "docs/reference/options.md",
    "schemas/ralph-yaml.schema.json",
  ]);
});

test("no help line writes a default by hand: each shown default comes from the declared value", () => {
  for (const spec of RUN_OPTION_SPECS) {
    const shown = (spec.type.show as (value: unknown) => string | null)(spec.defaultValue);
    if (shown !== null)
      assert.match(
        spec.help,
        /\{default\}/,
        `${spec.flag} has a default (${shown}) its help does not take from the declaration`,
      );
    assert.doesNotMatch(spec.help.replaceAll("{default}", ""), /default [0-9]/, spec.flag);
  }
});

test("ralph.yaml's schema knows every key ralph.yaml accepts, and no internal option", async () => {
  const schema = JSON.parse((await generatedFiles())["schemas/ralph-yaml.schema.json"] ?? "{}") as {
    properties: Record<string, { default?: unknown }>;
  };
  const { ralphYamlKeys } = await import("../../src/config/ralph-yaml.js");
  assert.deepEqual(Object.keys(schema.properties).sort(), ralphYamlKeys().sort());
  assert.equal(schema.properties.parent, undefined);
  assert.equal(schema.properties.timeout?.default, "30m");
});

test("init's ralph.yaml is valid against ralph.yaml's schema; a misspelt key and a bad value are not", async () => {
  const { Ajv2020 } = await import("ajv/dist/2020.js");
  const { parse } = await import("yaml");
  const { ralphYamlTemplate } = await import("../../src/config/init-template.js");
  const schema = JSON.parse(readFileSync(new URL("schemas/ralph-yaml.schema.json", root), "utf8")) as object;
  const validate = new Ajv2020({ strict: false }).compile(schema);
  for (const found of [null, { command: "npm test", source: "package.json" }]) {
    const yaml = parse(ralphYamlTemplate(found)) as Record<string, unknown>;
    assert.ok(validate(yaml), JSON.stringify(validate.errors));
    // Known-false controls: the schema does refuse what ralph refuses.
    assert.equal(validate({ ...yaml, max_iteration: 3 }), false);
    assert.equal(validate({ ...yaml, on_limit: "later" }), false);
  }
});
