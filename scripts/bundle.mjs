// After tsc: replaces dist/src/cli/main.js with one bundled file (its dependencies included) whose commands
// are chunks loaded only when run, so that start-up reads and compiles one file instead of dozens.
// Everything else under dist/ stays tsc's output: the tests import it, and the guardian and the demo agent
// are started from it as scripts of their own.
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
      const compiled = relative(outdir, join(root, "dist", relative(root, args.path))).split(sep).join("/").replace(/\.ts$/, ".js");
      return { contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(compiled)}, import.meta.url).href`), loader: "ts", resolveDir: dirname(args.path) };
    });
  },
};

for (const name of readdirSync(outdir)) if (CHUNK.test(name)) rmSync(join(outdir, name));
const result = await build({
  entryPoints: [{ in: join(root, "src", "cli", "fast-start.ts"), out: "main" }],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "chunk-[hash]",
  legalComments: "none",
  logLevel: "warning",
  plugins: [ownUrl],
  metafile: true,
  // Dependencies written as CommonJS call require(): give the bundle one.
  banner: { js: 'import { createRequire as __ralphRequire } from "node:module";\nconst require = __ralphRequire(import.meta.url);' },
});
// The banner goes before everything, the entry's #! line included: put that line back first.
const entry = join(outdir, "main.js");
const text = readFileSync(entry, "utf8");
if (!text.startsWith("#!")) writeFileSync(entry, `#!/usr/bin/env node\n${text}`);
// BUNDLE_META=file writes esbuild's metafile: which module landed in which chunk, and what each imports.
if (process.env.BUNDLE_META) (await import("node:fs")).writeFileSync(process.env.BUNDLE_META, JSON.stringify(result.metafile));
