// `npm run build`: tsc, then scripts/bundle.mjs, then scripts/code-cache.mjs, each skipped when what it is
// made from is as it was when it last succeeded (`npm start` after a pull or an edit rebuilds only that).
// What a step is made from is recorded in dist/.build-stamps.json as a digest of its inputs' paths, sizes
// and modification times; tsc itself is incremental (dist/.tsbuildinfo), so an edit recompiles what it
// touches. `node scripts/build.mjs --force` runs every step.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stampsFile = join(root, "dist", ".build-stamps.json");
const cli = join(root, "dist", "src", "cli");
const force = process.argv.includes("--force");

/** Every file under `dir` whose name passes `keep`, node_modules left out. */
function filesUnder(dir, keep) {
  const found = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") found.push(...filesUnder(path, keep));
    } else if (keep(entry.name)) found.push(path);
  }
  return found;
}

/** A digest of each file's path, size and modification time (a missing file counts as missing), and of `extra`. */
function stampOf(files, extra = "") {
  const hash = createHash("sha256");
  for (const file of [...files].sort()) {
    let stat = null;
    try {
      stat = statSync(file);
    } catch {
      // missing: recorded as such
    }
    hash.update(`${relative(root, file)}\0${stat ? `${stat.size}\0${stat.mtimeMs}` : "missing"}\n`);
  }
  hash.update(extra);
  return hash.digest("hex");
}

function readStamps() {
  try {
    return JSON.parse(readFileSync(stampsFile, "utf8"));
  } catch {
    return {};
  }
}

function run(label, args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`build: ${label} failed (${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

const ts = (name) => name.endsWith(".ts");
const readText = (file) => {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "missing";
  }
};
const manifests = [join(root, "package.json"), join(root, "package-lock.json")];
// The code caches are made for one build of the bundle (its mark, each file's last line) and one node.
const bundleMark = () =>
  ["main.cjs", "full.cjs", "quick-status.cjs", "quick-hook.cjs"]
    .map((name) => readText(join(cli, name)).trimEnd().split("\n").at(-1))
    .join("\n");

const steps = [
  {
    name: "tsc",
    inputs: () => [
      ...["src", "test", "bench"].flatMap((dir) => filesUnder(join(root, dir), ts)),
      join(root, "tsconfig.json"),
      ...manifests,
    ],
    outputs: [join(root, "dist", ".tsbuildinfo"), join(cli, "fast-start.js")],
    args: [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.json")],
  },
  {
    name: "bundle",
    inputs: () => [...filesUnder(join(root, "src"), ts), join(root, "scripts", "bundle.mjs"), ...manifests],
    outputs: ["main.cjs", "main.js", "full.cjs", "full.js", "hook-stop.js", "quick-status.cjs", "quick-hook.cjs"].map(
      (name) => join(cli, name),
    ),
    args: [join(root, "scripts", "bundle.mjs")],
  },
  {
    name: "code-cache",
    inputs: () => [join(root, "scripts", "code-cache.mjs")],
    // By content: tsc rewrites this file whenever it compiles the CLI, mostly to the same text.
    extra: () => `${process.version}\n${bundleMark()}\n${readText(join(cli, "cached-require.js"))}`,
    outputs: ["full.cjs.cache", "quick-status.cjs.cache", "quick-hook.cjs.cache"].map((name) => join(cli, name)),
    args: [join(root, "scripts", "code-cache.mjs")],
  },
];

for (const step of steps) {
  const stamp = stampOf(step.inputs(), step.extra?.() ?? "");
  const stamps = readStamps();
  if (!force && stamps[step.name] === stamp && step.outputs.every((file) => existsSync(file))) continue;
  run(step.name, step.args);
  // The stamp taken before the step: a file changed while it ran is seen as changed next time.
  writeFileSync(stampsFile, `${JSON.stringify({ ...readStamps(), [step.name]: stamp }, null, 2)}\n`);
}
