// Text from the agent reaches a person's terminal with its control sequences shown, never obeyed: the runner's
// own output on a real pseudo-terminal (--live), `ralph list`, `status`, `logs` and `logs --iteration`.
// ralph's own colours stay.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, readEvents, runRalph, tempProjects } from "../helpers/cli.js";
import { waitFor, within } from "../helpers/wait.js";
import { inTerminal } from "../fixtures/terminal.js";

const project = tempProjects("ralph-escapes-");
const terminals: Array<ReturnType<typeof inTerminal>> = [];
after(() => {
  for (const terminal of terminals) if (terminal.running()) terminal.pty.kill("SIGKILL");
});

// The payload: OSC 52 (sets the clipboard to `rm -rf ~`) and a screen clear; plus the agent's own colour.
const ASK = "Pick \x1b]52;c;cm0gLXJmIH4K\x07 one \x1b[2J";
const SHOWN = "Pick \\x1b]52;c;cm0gLXJmIH4K\\x07 one \\x1b[2J";
const TITLE = "Fix \x1b]0;owned\x07 the title";

/** Raw control sequences of the agent's that must never reach a terminal. */
function assertNeutral(output: string, where: string): void {
  for (const raw of ["\x1b]", "\x07", "\x1b[2J", "\x1b[35m"])
    assert.ok(
      !output.includes(raw),
      `${where} holds a raw ${JSON.stringify(raw)}: ${JSON.stringify(output.slice(0, 400))}`,
    );
}

describe("terminal output is neutralised", () => {
  test("the payload is shown escaped by the runner on a terminal, list, status and logs; ralph's own colours stay", async () => {
    const dir = project();
    writeFileSync(join(dir, "TODO.md"), `- [ ] ${TITLE}\n`);
    writeFileSync(
      join(dir, "agent.sh"),
      `#!/bin/sh\nprintf 'working \\033[35mmagenta\\033[0m\\n'\nprintf '<ask>%s</ask>\\n' '${ASK}'\n`,
    );
    chmodSync(join(dir, "agent.sh"), 0o755);
    const env = cleanEnv();
    delete env.NO_COLOR;
    const terminal = inTerminal(
      dir,
      ["run", "--name", "e", "-n", "1", "--live", "--tasks", "TODO.md", "go", "--", "./agent.sh"],
      env,
    );
    terminals.push(terminal);
    const status = join(dir, ".ralph", "runs", "e", "status.json");
    await waitFor(
      () => existsSync(status) && (JSON.parse(readFileSync(status, "utf8")) as { question?: unknown }).question != null,
      "the question",
      20_000,
    );
    const outputs: Record<string, string> = {};
    outputs.list = (await runRalph(["list"], dir)).stdout;
    outputs.status = (await runRalph(["status", "e"], dir)).stdout;
    assert.equal((await runRalph(["stop", "e"], dir)).code, 0);
    await within(terminal.exited, 20_000, "the run to end");
    outputs.runner = terminal.output();
    outputs.logs = (await runRalph(["logs", "e"], dir)).stdout;
    outputs.iteration = (await runRalph(["logs", "e", "--iteration", "1"], dir)).stdout;
    for (const [where, output] of Object.entries(outputs)) assertNeutral(output, where);
    for (const where of ["list", "status", "runner", "logs"])
      assert.ok(outputs[where]?.includes(SHOWN), `${where} shows the question escaped: ${outputs[where]}`);
    for (const where of ["runner", "logs", "iteration"])
      assert.ok(outputs[where]?.includes("working \\x1b[35mmagenta\\x1b[0m"), `${where} shows the output escaped`);
    for (const where of ["runner", "logs"])
      assert.ok(outputs[where]?.includes("Fix \\x1b]0;owned\\x07 the title"), `${where} shows the task title escaped`);
    assert.match(outputs.status ?? "", /^task {7}.*Fix \\x1b\]0;owned\\x07 the title/m);
    // Known-false controls: the stored event holds the raw bytes, and the terminal did get ralph's own colours.
    const asked = readEvents(join(dir, ".ralph", "runs", "e")).find((event) => event.type === "needs_human");
    assert.equal(asked?.question, ASK);
    assert.ok(outputs.runner?.includes("\x1b[1m── iteration"), "ralph's bold header reached the terminal");
  });
});
