// The review's diff shows the bytes that land: an attribute the agent writes (`* -diff`, a textconv) changes
// nothing in it, and a file is shown as binary only when its bytes are, with its name and size.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { snapshotTree, treeDiff } from "../../src/worktree/tree-snapshot.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

async function tree(repo: string): Promise<string> {
  const snap = await snapshotTree(repo, process.env);
  assert.ok(snap.ok, snap.ok ? "" : snap.message);
  return snap.tree;
}

test("`* -diff` and a textconv written into the tree do not hide a change from the review's diff (plain git diff hides it)", async () => {
  const repo = tempRepo();
  const before = await tree(repo);
  writeFileSync(join(repo, ".gitattributes"), "* -diff\n*.md diff=hide\n");
  git(repo, "config", "diff.hide.textconv", "true");
  writeFileSync(join(repo, "secret.js"), "process.exit(0) // the line a reviewer must see\n");
  writeFileSync(join(repo, "notes.md"), "hidden by a textconv\n");
  writeFileSync(join(repo, "blob.bin"), Buffer.from([0x00, 0x01, 0x02, 0x03, 0x04]));
  const after = await tree(repo);
  const diff = await treeDiff(repo, process.env, before, after, 1 << 20);
  assert.ok(diff.ok, diff.ok ? "" : diff.message);
  assert.match(diff.text, /\+process\.exit\(0\) \/\/ the line a reviewer must see/);
  assert.match(diff.text, /\+\* -diff/);
  assert.match(diff.text, /\+hidden by a textconv/);
  assert.match(diff.text, /blob\.bin\s+\| Bin 0 -> 5 bytes/);
  assert.match(diff.text, /Binary files \/dev\/null and b\/blob\.bin differ/);
  // Control: plain git diff, run in the repository, shows the script as binary and the notes through the textconv.
  const plain = git(repo, "diff", "--stat", "--patch", before, after);
  assert.match(plain, /secret\.js\s+\| Bin 0 -> \d+ bytes/);
  assert.doesNotMatch(plain, /the line a reviewer must see/);
});
