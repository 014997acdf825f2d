import { after, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reopenTasks } from "../../src/judge/reopen-tasks.js";
import { locateStoryFlags } from "../../src/judge/story-flags.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-reopen-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("a prd.json: only the named stories' passes become false; spacing, key order, BOM, other stories and the mode stay", () => {
  const file = join(dir, "prd.json");
  const text =
    '\uFEFF{"userStories": [\n  {"id": "US-1", "title": "a", "notes": "a \\"quoted\\" note", "passes" :  true},\n  {"passes": true, "id": 2, "title": "b", "tags": [1, {"passes": true}]},\n  {"id": "US-3", "title": "c", "passes": true}\n], "passes": true}\n';
  writeFileSync(file, text);
  chmodSync(file, 0o640);
  const result = reopenTasks(file, ["2", "US-3", "US-9"]);
  assert.deepEqual(result, { ok: true, reopened: ["2", "US-3"] });
  assert.equal(
    readFileSync(file, "utf8"),
    text
      .replace('{"passes": true, "id": 2', '{"passes": false, "id": 2')
      .replace('"c", "passes": true', '"c", "passes": false'),
  );
  assert.equal(statSync(file).mode & 0o777, 0o640);
});

test("a checklist: only those items' boxes are cleared, every other byte (CRLF, [x] in the text) unchanged", () => {
  const file = join(dir, "TASKS.md");
  const text = "# Tasks\r\n- [x] first [x] stays\r\n- [X] second\r\n- [x] third\r\n";
  writeFileSync(file, text);
  assert.deepEqual(reopenTasks(file, ["2", "3"]), { ok: true, reopened: ["2", "3"] });
  assert.equal(readFileSync(file, "utf8"), "# Tasks\r\n- [ ] first [x] stays\r\n- [ ] second\r\n- [x] third\r\n");
});

test("a task that is already open, or a broken file: nothing written", () => {
  const file = join(dir, "open.md");
  writeFileSync(file, "- [ ] open\n");
  assert.deepEqual(reopenTasks(file, ["1"]), { ok: true, reopened: [] });
  const broken = join(dir, "broken.json");
  writeFileSync(broken, "{ not json");
  assert.equal(reopenTasks(broken, ["1"]).ok, false);
  assert.equal(readFileSync(broken, "utf8"), "{ not json");
});

test("locateStoryFlags: null for text that is not an object with userStories", () => {
  assert.equal(locateStoryFlags("[1, 2]"), null);
  assert.equal(locateStoryFlags('{"stories": []}'), null);
  assert.deepEqual(locateStoryFlags('{"userStories": [{"id": 1}]}'), [{ id: "1", passes: null, close: 25 }]);
});
