// Every relative link in the project's Markdown resolves: the file exists and a #fragment names one of its
// headings (scripts/check-links.mjs). The control shows the checker does see a missing file and a missing heading.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Checked {
  files: number;
  broken: { file: string; line: number; target: string; why: string }[];
}

function check(root: string): Checked {
  const run = spawnSync(process.execPath, ["scripts/check-links.mjs", root, "--json"], { encoding: "utf8" });
  return JSON.parse(run.stdout) as Checked;
}

test("every relative link in README.md, CONTRIBUTING.md, docs/ and bench/RESULTS.md resolves", () => {
  const checked = check(".");
  assert.ok(checked.files >= 10, `expected the README and the docs pages, found ${checked.files} files`);
  assert.deepEqual(checked.broken, []);
});

test("control: a link to a missing page and to a missing heading are both reported", () => {
  const root = mkdtempSync(join(tmpdir(), "ralph-links-"));
  try {
    mkdirSync(join(root, "docs"));
    writeFileSync(
      join(root, "README.md"),
      "# Title\n\nSee [the guide](docs/guide.md#ending-a-run), [gone](docs/gone.md) and [here](#title).\n",
    );
    writeFileSync(join(root, "docs", "guide.md"), "# Guide\n\n## Starting a run\n\n```sh\n# Ending a run\n```\n");
    const checked = check(root);
    assert.deepEqual(
      checked.broken.map((link) => link.target),
      ["docs/guide.md#ending-a-run", "docs/gone.md"],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
