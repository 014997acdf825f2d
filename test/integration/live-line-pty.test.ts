// The live status line as a person sees it: the real pinned Claude Code CLI (against the fake Anthropic API)
// runs a slow Bash tool while ralph runs on a pseudo-terminal; the captured screen output is asserted.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "@lydell/node-pty";
import { bashTurn, textTurn } from "../fixtures/fake-anthropic.js";
import { RalphClaudeLab } from "../fixtures/ralph-claude-lab.js";
import { RALPH } from "../helpers/cli.js";

const lab = new RalphClaudeLab();
after(() => lab.cleanup());

// eslint-disable-next-line no-control-regex -- terminal colour codes are what this strips
const COLOURS = /\x1b\[[0-9;]*m/g;
const CLEAR_LINE = "\r\x1b[2K";

/** Runs ralph on a pseudo-terminal until it exits; resolves with everything written to the terminal. */
function onTerminal(
  cwd: string,
  env: NodeJS.ProcessEnv,
  args: string[],
): Promise<{ exitCode: number; output: string }> {
  const pty = spawn(process.execPath, [RALPH, ...args], {
    cwd,
    env: env as Record<string, string>,
    cols: 160,
    rows: 40,
    name: "xterm",
  });
  let output = "";
  pty.onData((data) => (output += data));
  const timer = setTimeout(() => pty.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    pty.onExit(({ exitCode }) => {
      clearTimeout(timer);
      resolve({ exitCode, output: output.replace(COLOURS, "") });
    }),
  );
}

describe("the live status line", { timeout: 150_000 }, () => {
  const script = () => [bashTurn("sleep 2.5"), textTurn("Slept.")];

  test("on a TTY: one updating line with iteration/max, elapsed, tokens and the current tool, then the iteration line", async () => {
    const c = await lab.newCase(script);
    const { exitCode, output } = await onTerminal(c.projectDir, c.env, [
      "run",
      "--agent",
      "claude",
      "--name",
      c.runId,
      "-n",
      "1",
      "sleep a bit",
    ]);
    assert.equal(exitCode, 3, output);
    // Every redraw clears the line first; what follows is the status itself.
    const frames = output.split(CLEAR_LINE).map((frame) => frame.split("\r\n")[0] ?? "");
    const tool = frames.find((frame) => /^\[1\/1\] \d+s · \d+ tokens · tool: Bash sleep 2\.5$/.test(frame));
    assert.ok(tool, `a frame showing the running Bash tool in:\n${JSON.stringify(frames)}`);
    // The clock ticks while the tool runs: at least two different elapsed times with the tool shown.
    const seconds = new Set(
      frames.filter((frame) => frame.includes("tool: Bash")).map((frame) => /\] (\d+)s/.exec(frame)?.[1]),
    );
    assert.ok(seconds.size >= 2, `elapsed seconds seen: ${[...seconds].join(", ")}`);
    assert.match(output, /── iteration 1\/1 ──\r\n/);
    assert.match(
      output,
      /\[1\/1\] [\d.]+s continue · tokens in 200 · out 40 · cache read 0 · cache write 0 · total 240 · \$0\.0020 so far(?: · cpu [^\r\n]*)?\r\n/,
    );
    // The status line is cleared before the summary: nothing of it is left after the last line.
    assert.ok(
      output
        .trimEnd()
        .endsWith(`next: give it more iterations: ralph continue ${c.runId} -n 2\r\nreport: ralph report ${c.runId}`),
      JSON.stringify(output.slice(-300)),
    );
  });

  test("control: off a TTY the same run prints plain lines only, no redraws", async () => {
    const c = await lab.newCase(script);
    const result = await lab.runRalph(c, ["-n", "1", "sleep a bit"]);
    assert.equal(result.code, 3, result.stderr);
    assert.ok(!result.stdout.includes("\x1b[2K"), "no line redraws in a pipe");
    assert.doesNotMatch(result.stdout, /tool: Bash/);
    assert.match(
      result.stdout,
      /^\[1\/1\] [\d.]+s continue · tokens in 200 · out 40 · cache read 0 · cache write 0 · total 240 · \$0\.0020 so far(?: · cpu [^\n]*)?$/m,
    );
  });
});
