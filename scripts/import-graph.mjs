// Counts the imports between ralph's source files: how many there are, which run up the layers (a lower
// folder importing a higher one) and which files import each other in a cycle.
// `node scripts/import-graph.mjs [DIR] [--json]`; exits 1 when a folder has no layer.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** Each folder of src/ and its layer: a file may import its own layer and the ones below, never above. */
const LAYERS = {
  util: 0,
  exit: 0,
  redact: 0,
  process: 1,
  store: 1,
  agents: 1,
  config: 2,
  spend: 2,
  judge: 2,
  worktree: 2,
  notify: 2,
  view: 2,
  run: 2,
  sandbox: 2,
  control: 3,
  hook: 3,
  report: 3,
  engine: 4,
  parallel: 5,
  ui: 5,
  tui: 5,
  launch: 6,
  cli: 7,
};

const args = process.argv.slice(2);
const root = resolve(args.find((arg) => !arg.startsWith("--")) ?? "src");
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (path.endsWith(".ts")) files.push(path);
  }
})(root);

const edges = new Map();
let imports = 0;
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const targets = new Set();
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)\.js"|import\(\s*"(\.[^"]+)\.js"\s*\)/g,
  )) {
    targets.add(resolve(dirname(file), `${match[1] ?? match[2]}.ts`));
    imports += 1;
  }
  edges.set(file, [...targets]);
}

const folderOf = (file) => relative(root, file).split("/")[0];
const unknown = [...new Set(files.map(folderOf))].filter((folder) => !folder.endsWith(".ts") && !(folder in LAYERS));
const upward = [];
for (const [file, targets] of edges) {
  for (const target of targets) {
    const [from, to] = [folderOf(file), folderOf(target)];
    if (from !== to && (LAYERS[to] ?? 0) > (LAYERS[from] ?? 0))
      upward.push(`${relative(root, file)} -> ${relative(root, target)}`);
  }
}

// Strongly connected components (Tarjan): every component of more than one file is a cycle.
const cycles = [];
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
function visit(node) {
  index.set(node, index.size);
  low.set(node, index.get(node));
  stack.push(node);
  onStack.add(node);
  for (const next of edges.get(node) ?? []) {
    if (!edges.has(next)) continue;
    if (!index.has(next)) {
      visit(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
  }
  if (low.get(node) !== index.get(node)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(relative(root, member));
  } while (member !== node);
  if (component.length > 1) cycles.push(component.sort());
}
for (const file of files) if (!index.has(file)) visit(file);

const report = { files: files.length, imports, upward: upward.sort(), cycles, unknown_folders: unknown };
// A reader that stops early (`| head`) has what it wanted: the rest of the report goes nowhere, quietly.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
if (args.includes("--json")) process.stdout.write(`${JSON.stringify(report)}\n`);
else {
  process.stdout.write(
    `${report.files} files, ${imports} imports, ${upward.length} up the layers, ${cycles.length} cycles\n`,
  );
  // The layers from the top down, each with its folders and their files.
  const count = (folder) => files.filter((file) => folderOf(file) === folder).length;
  const levels = [...new Set(Object.values(LAYERS))].sort((a, b) => b - a);
  for (const level of levels) {
    const folders = Object.keys(LAYERS).filter((folder) => LAYERS[folder] === level && count(folder) > 0);
    if (folders.length > 0)
      process.stdout.write(`  layer ${level}: ${folders.map((folder) => `${folder} (${count(folder)})`).join(", ")}\n`);
  }
  for (const line of upward) process.stdout.write(`  up: ${line}\n`);
  for (const cycle of cycles) process.stdout.write(`  cycle: ${cycle.join(" <-> ")}\n`);
  for (const folder of unknown) process.stdout.write(`  folder without a layer: ${folder}\n`);
}
process.exitCode = unknown.length > 0 ? 1 : 0;
