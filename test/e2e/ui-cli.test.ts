// `ralph ui` argument checking: bad input is one line naming it, exit 2, and nothing served.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-ui-cli-");

test("ralph ui refuses a bad port or a missing project directory with exit 2 and one line", async () => {
  const dir = project();
  const cases: Array<[string[], RegExp]> = [
    [
      ["ui", "--port", "70000"],
      /^ralph: --port: expected a port number \(0 to 65535, 0 = any free port\), got "70000"\n$/,
    ],
    [["ui", "--port", "http"], /^ralph: --port: expected a port number/],
    [["ui", "--project", join(dir, "missing")], /^ralph: --project .*missing: expected a project directory\n$/],
  ];
  for (const [args, message] of cases) {
    const result = await runRalph(args, dir);
    assert.equal(result.code, 2, args.join(" "));
    assert.match(result.stderr, message);
    assert.equal(result.stdout, "");
  }
});
