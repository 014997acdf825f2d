// Writes every file generated from the declarations in src/ (the JSON Schemas under schemas/ and the pages of
// docs/reference/, see src/cli/generated-files.ts). With --check it writes nothing and exits 1 naming each
// file that is missing or differs (npm test runs the same comparison in test/unit/reference-docs).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedFiles } from "../dist/src/cli/generated-files.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const stale = [];
for (const [path, text] of Object.entries(await generatedFiles())) {
  const file = join(root, path);
  let old = null;
  try {
    old = readFileSync(file, "utf8");
  } catch {
    // A missing file is stale too.
  }
  if (old === text) continue;
  if (check) stale.push(path);
  else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${path}`);
  }
}
if (stale.length > 0) {
  console.error(`stale (run npm run schemas): ${stale.join(", ")}`);
  process.exit(1);
}
