// After tsc: writes the CLI's entry, dist/src/cli/main.cjs, one bundled CommonJS file (its dependencies
// included). Beside it: full.cjs, the whole CLI without the quick paths as one CommonJS file (what main.cjs
// falls back to, through the V8 code cache scripts/code-cache.mjs writes for it); full.js, the same as an
// ES module whose commands are chunks loaded only when run (tests compare the two); hook-stop.js (deciding
// a stop with a loop active); the quick paths' own files, quick-status.cjs and quick-hook.cjs, each one
// module with everything it needs, so that `ralph status` and the Stop hook load two files in all; and
// main.js, which runs main.cjs. Everything else under dist/ stays
// tsc's output: the tests import it, and the guardian and the demo agent are started from it as scripts of
// their own.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist", "src", "cli");
const CHUNK = /^chunk-[A-Z0-9]+\.js$/;

// Entry and chunks all land in dist/src/cli, so each module's import.meta.url is rewritten to the address
// its own tsc output has there: paths it builds relative to itself (web/, package.json, the guardian's
// script) stay right whichever chunk it ends up in.
const ownUrl = {
  name: "own-import-meta-url",
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      const compiled = relative(outdir, join(root, "dist", relative(root, args.path)))
        .split(sep)
        .join("/")
        .replace(/\.ts$/, ".js");
      return {
        contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(compiled)}, import.meta.url).href`),
        loader: "ts",
        resolveDir: dirname(args.path),
      };
    });
  },
};

/** Leaves the imports named in `map` (importer's file name → specifier → the file imported at run time) unbundled. */
function keepApart(map) {
  return {
    name: "keep-apart",
    setup(bundle) {
      bundle.onResolve({ filter: /^\./ }, (args) => {
        const path = map[args.importer.split(sep).pop()]?.[args.path];
        return path === undefined ? undefined : { path, external: true };
      });
    },
  };
}

// In the CommonJS quick files `require` is Node's own, so `createRequire(...)` is that require (for Node's
// built-ins, the only thing the sources load through it: a relative path would resolve from the quick file):
// importing node:module for it would load Node's public module API, its ES module loader among it (about
// 1 ms). Only createRequire is given: a quick file importing anything else from node:module fails the build.
const ownRequire = {
  name: "own-require",
  setup(bundle) {
    bundle.onResolve({ filter: /^node:module$/ }, () => ({ path: "node:module", namespace: "own-require" }));
    bundle.onLoad({ filter: /.*/, namespace: "own-require" }, () => ({
      contents: "export const createRequire = () => require;",
      loader: "js",
    }));
  },
};

const common = {
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
};

for (const name of readdirSync(outdir)) if (CHUNK.test(name)) rmSync(join(outdir, name));
const result = await build({
  ...common,
  format: "esm",
  // Dependencies written as CommonJS call require(): give the bundle one.
  banner: {
    js: 'import { createRequire as __ralphRequire } from "node:module";\nconst require = __ralphRequire(import.meta.url);',
  },
  entryPoints: [
    { in: join(root, "src", "cli", "main.ts"), out: "full" },
    { in: join(root, "src", "hook", "handle-stop.ts"), out: "hook-stop" },
  ],
  splitting: true,
  chunkNames: "chunk-[hash]",
  plugins: [ownUrl],
});
// V8 keeps a script whose text has a character beyond Latin-1 as two bytes a character (the run's chunk,
// about 1 MB, was 1.9 MB of the runner's heap, and a bigger heap makes each agent's fork slower). esbuild
// escapes such characters in strings, not in comments and regular expressions: escaped there too, they
// read the same (a \uXXXX escape is what the character means in a regular expression as in a comment).
function narrow(file) {
  const code = readFileSync(file, "utf8");
  const narrowed = code.replace(/[\u0100-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
  if (narrowed !== code) writeFileSync(file, narrowed);
}
for (const name of readdirSync(outdir))
  if (CHUNK.test(name) || name === "full.js" || name === "hook-stop.js") narrow(join(outdir, name));
// The entry and its quick paths: CommonJS, so that Node never sets up its ES module loader for them (the
// full CLI's import() does), and one self-contained file each (no chunks shared with the rest): each module
// costs Node a resolve, a read and a compile of its own. Their import.meta.url is their own file's.
const commonJs = {
  ...common,
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__importMetaUrl" },
  // (strict, as the modules were written: the banner goes before esbuild's own "use strict")
  banner: { js: '"use strict";\nconst __importMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  splitting: false,
};
const quick = await build({
  ...commonJs,
  entryPoints: [
    { in: join(root, "src", "cli", "fast-start.ts"), out: "main" },
    { in: join(root, "src", "cli", "quick-status.ts"), out: "quick-status" },
    { in: join(root, "src", "cli", "quick-hook.ts"), out: "quick-hook" },
  ],
  plugins: [
    ownUrl,
    ownRequire,
    keepApart({
      "fast-start.ts": { "../hook/handle-stop.js": "./hook-stop.js" },
      "hook-handle.ts": { "../../hook/handle-stop.js": "./hook-stop.js" },
    }),
  ],
});
// The whole CLI as one CommonJS file, run from its code cache: compiling the ES module chunks of a `ralph
// run` cost about 100 ms of its start (README, Development). Its commands stay lazy: esbuild wraps each
// dynamically imported module in a function run at the import.
const whole = await build({
  ...commonJs,
  entryPoints: [{ in: join(root, "src", "cli", "main.ts"), out: "full" }],
  plugins: [ownUrl, ownRequire],
});
// Compiled as a vm script (its code cache), full.cjs has no import(): every module it imports at run time
// must be inside it.
for (const [file, output] of Object.entries(whole.metafile.outputs)) {
  const left = output.imports.filter((entry) => entry.kind === "dynamic-import" && entry.external);
  if (left.length > 0)
    throw new Error(
      `${file} imports ${left.map((entry) => entry.path).join(", ")} at run time, which its code cache cannot`,
    );
}
// The banner goes before everything, the entry's #! line included: put that line back first.
const entry = join(outdir, "main.cjs");
const text = readFileSync(entry, "utf8");
if (!text.startsWith("#!")) writeFileSync(entry, `#!/usr/bin/env node\n${text.replace(/^#!.*\n/m, "")}`);
// full.cjs is compiled as a script of its own (cached-require.ts), where a #! line is no JavaScript.
const wholeFile = join(outdir, "full.cjs");
writeFileSync(wholeFile, readFileSync(wholeFile, "utf8").replace(/^#!.*\n/m, ""));
narrow(wholeFile);
// Each cached file ends with this build's mark, which its code cache (scripts/code-cache.mjs) starts with.
const mark = `//# ralph-build ${randomBytes(8).toString("hex")}\n`;
for (const name of ["quick-status.cjs", "quick-hook.cjs", "full.cjs"])
  writeFileSync(join(outdir, name), `${readFileSync(join(outdir, name), "utf8")}${mark}`);
// main.js, where hook entries written by earlier versions point, runs the same entry.
writeFileSync(
  join(outdir, "main.js"),
  '#!/usr/bin/env node\n// The CLI\'s entry is main.cjs; this file runs it for callers written before it was.\nimport { createRequire } from "node:module";\ncreateRequire(import.meta.url)("./main.cjs");\n',
);
// BUNDLE_META=file writes esbuild's metafiles: which module landed in which file, and what each imports.
if (process.env.BUNDLE_META)
  writeFileSync(
    process.env.BUNDLE_META,
    JSON.stringify({ full: result.metafile, quick: quick.metafile, whole: whole.metafile }),
  );
