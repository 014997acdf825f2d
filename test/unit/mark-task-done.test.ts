import { after, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markTaskDone } from "../../src/judge/mark-task-done.js";

const dir = mkdtempSync(join(tmpdir(), "ralph-mark-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("a prd.json: only that story's passes becomes true, other fields stay, the mode is kept", () => {
  const file = join(dir, "prd.json");
  writeFileSync(
    file,
    JSON.stringify({
      project: "x",
      userStories: [
        { id: "US-1", title: "a", passes: false, notes: "n" },
        { id: 2, title: "b", passes: false },
      ],
    }),
  );
  chmodSync(file, 0o644);
  const marked = markTaskDone(file, "2");
  assert.ok(marked.ok);
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), {
    project: "x",
    userStories: [
      { id: "US-1", title: "a", passes: false, notes: "n" },
      { id: 2, title: "b", passes: true },
    ],
  });
  assert.equal(statSync(file).mode & 0o777, 0o644);
});

test("a checklist: only that item's line is ticked, every other byte (CRLF, fenced examples) unchanged", () => {
  const file = join(dir, "TASKS.md");
  const text = "# Tasks\r\n\r\n```\r\n- [ ] an example, not a task\r\n```\r\n- [ ] first\r\n- [ ] second [ ] stays\r\n";
  writeFileSync(file, text);
  const marked = markTaskDone(file, "7");
  assert.ok(marked.ok);
  assert.equal(readFileSync(file, "utf8"), text.replace("- [ ] second", "- [x] second"));
});

test("an unknown task or a broken file: a message, the file untouched", () => {
  const file = join(dir, "broken.json");
  writeFileSync(file, "{ not json");
  const broken = markTaskDone(file, "US-1");
  assert.ok(!broken.ok && /is not valid JSON/.test(broken.message));
  const list = join(dir, "list.md");
  writeFileSync(list, "- [ ] only\n");
  const unknown = markTaskDone(list, "9");
  assert.deepEqual(unknown, { ok: false, message: "has no task 9 any more" });
  assert.equal(readFileSync(list, "utf8"), "- [ ] only\n");
});

test("a prd.json of one-line stories: only that story's passes value changes, every other byte (layout, key order, escapes) stays", () => {
  const file = join(dir, "oneline.json");
  const text =
    '{"project": "x",\n "userStories": [\n  {"id": "US-1", "title": "a \\"quoted\\" {brace}", "passes": false},\n  {"id": "US-2", "title": "b", "passes": false, "notes": "passes: false"},\n  {"id": 3, "title": "no flag"}\n ]\n}\n';
  writeFileSync(file, text);
  assert.ok(markTaskDone(file, "US-2").ok);
  assert.equal(readFileSync(file, "utf8"), text.replace('"b", "passes": false', '"b", "passes": true'));
  assert.ok(markTaskDone(file, "3").ok);
  assert.equal(
    readFileSync(file, "utf8"),
    text.replace('"b", "passes": false', '"b", "passes": true').replace('"no flag"}', '"no flag", "passes": true}'),
  );
  assert.deepEqual(
    JSON.parse(readFileSync(file, "utf8")).userStories.map((story: { passes?: boolean }) => story.passes),
    [false, true, true],
  );
});
