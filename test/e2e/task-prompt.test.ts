// The whole task reaches the agent: id, title, description, acceptance criteria and notes, the task file's
// path, and how a task is marked done there.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-task-prompt-");
/** A command agent that appends its stdin to `file` and does nothing else. */
const recorder = (file: string) => ["--", "sh", "-c", `cat > '${file}'`];

describe("the whole task reaches the agent", () => {
  test("a prd.json story: every field the agent needs, the file, and how to mark it done", async () => {
    const dir = project();
    const prd = {
      project: "site",
      userStories: [
        {
          id: "US-7",
          title: "Add a README",
          description: "New contributors need to know how to build the site.",
          acceptanceCriteria: ["README.md explains `npm install` and `npm run build`", "It links to CONTRIBUTING.md"],
          priority: 1,
          passes: false,
          notes: "Keep it under one page.",
        },
      ],
    };
    writeFileSync(join(dir, "prd.json"), JSON.stringify(prd, null, 2));
    const prompt = join(dir, "prompt.txt");
    const result = await runRalph(
      [
        "run",
        "--name",
        "t",
        "-n",
        "1",
        "--tasks",
        "prd.json",
        "--check",
        "true",
        "Work on the site.",
        ...recorder(prompt),
      ],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.equal(
      readFileSync(prompt, "utf8"),
      [
        "Work on the site.",
        "",
        "## Current task",
        "",
        "US-7: Add a README",
        "",
        "Description:",
        "New contributors need to know how to build the site.",
        "",
        "Acceptance criteria:",
        "- README.md explains `npm install` and `npm run build`",
        "- It links to CONTRIBUTING.md",
        "",
        "Notes:",
        "Keep it under one page.",
        "",
        'The task list is prd.json. When this task is done, set "passes" to true on the story with "id" "US-7" there, and change nothing else in that file.' +
          " It counts as done only once the run's checks pass; a task marked done while a check fails is reopened.",
        "",
      ].join("\n"),
    );
  });

  test("a checklist item: its indented lines come with it, the next item's do not", async () => {
    const dir = project();
    writeFileSync(
      join(dir, "TASKS.md"),
      "# Tasks\n\n- [x] Set up CI\n- [ ] Add a README\n  Explain the build.\n\n    npm run build\n  Link CONTRIBUTING.md.\n- [ ] Add a licence\n  MIT.\n",
    );
    const prompt = join(dir, "prompt.txt");
    const result = await runRalph(
      ["run", "--name", "t", "-n", "1", "--tasks", "TASKS.md", "Work.", ...recorder(prompt)],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    assert.equal(
      readFileSync(prompt, "utf8"),
      "Work.\n\n## Current task\n\nline 4: Add a README\n\nNotes:\nExplain the build.\n\n  npm run build\nLink CONTRIBUTING.md.\n\n" +
        'The task list is TASKS.md. When this task is done, tick its box on line 4 there ("- [ ]" becomes "- [x]"), and change nothing else in that file.\n',
    );
  });
});
