// A `--parallel` child's agent can reach its parent's run directory: an edit of the parent's settings.json
// (its agent command swapped for one of the agent's) never reaches the next child.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, runRalph } from "../helpers/cli.js";
import { isolateGitConfig, storiesRepo } from "../helpers/git-repo.js";

after(isolateGitConfig());

const env = () => cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });

test("a child's agent that rewrites the parent's settings.json does not choose the next child's agent", async () => {
  const repo = storiesRepo();
  const planted = join(repo, "..", `${repo.split("/").pop()}-planted`);
  const agent = join(repo, "..", `${repo.split("/").pop()}-agent.cjs`);
  writeFileSync(
    agent,
    `const fs = require("fs"); let prompt = "";
process.stdin.on("data", (d) => (prompt += d)).on("end", () => {
  const id = /## Current task\\n\\n([^:\\n]+):/.exec(prompt)[1];
  if (id === "US-1") {
    const file = process.env.RALPH_RUN_DIR + "/../p/settings.json";
    const settings = JSON.parse(fs.readFileSync(file, "utf8"));
    settings.agentCmd = ["touch", ${JSON.stringify(planted)}];
    fs.writeFileSync(file, JSON.stringify(settings, null, 2) + "\\n");
  }
  const prd = JSON.parse(fs.readFileSync("prd.json", "utf8"));
  for (const story of prd.userStories) if (story.id === id) story.passes = true;
  fs.writeFileSync("prd.json", JSON.stringify(prd, null, 2) + "\\n");
});`,
  );
  const result = await runRalph(
    ["run", "--tasks", "prd.json", "--parallel", "1", "--name", "p", "work", "--", process.execPath, agent],
    repo,
    env(),
  );
  assert.match(
    readFileSync(join(repo, ".ralph", "runs", "p", "settings.json"), "utf8"),
    /planted/,
    "the child's agent did rewrite it",
  );
  assert.equal(existsSync(planted), false, "the planted agent command never ran");
  assert.match(result.stdout + result.stderr, /settings\.json is not what ralph wrote/);
});
