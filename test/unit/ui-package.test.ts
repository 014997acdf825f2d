// The dashboard's page files ship in the npm package, where the server looks for them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { loadWebFiles, WEB_DIR } from "../../src/ui/static-files.js";

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

test("npm pack includes every file of web/, and the server finds web/ from dist", () => {
  const root = join(WEB_DIR, "..");
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" }),
  ) as Array<{ files: Array<{ path: string }> }>;
  const paths = new Set(packed[0]?.files.map((file) => file.path));
  const web = filesUnder(WEB_DIR).map((file) => relative(root, file));
  assert.ok(web.length >= 5, `web/ holds ${web.length} files`);
  assert.deepEqual(
    web.filter((file) => !paths.has(file)),
    [],
  );
  assert.ok(paths.has("dist/src/ui/server.js"));
  const { assets, pages } = loadWebFiles();
  assert.deepEqual([...pages.keys()].sort(), ["index.html", "run.html"]);
  assert.ok(assets.has("/assets/js/run-page.js") && assets.has("/assets/app.css"));
  for (const html of pages.values())
    assert.doesNotMatch(
      html,
      /<script>|<script(?![^>]*\bsrc=)|\son[a-z]+=|style=/i,
      "no inline script, handler or style: the CSP forbids them",
    );
});
