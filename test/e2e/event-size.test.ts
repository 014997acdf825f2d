// events.jsonl stays proportional to the agent's output whatever its shape (one event per line of
// `yes` once made it 55 times larger), while --live and `ralph logs` still show the output.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, readEvents, runRalph, tempProjects } from "../helpers/cli.js";

const project = tempProjects("ralph-events-");
const STREAM_AGENT = fileURLToPath(new URL("../../bench/fixtures/stream-agent.js", import.meta.url));
const BYTES = 2 * 1024 * 1024;

const SHAPES: Array<{ name: string; argv: string[]; claude?: boolean }> = [
  { name: "short lines (yes)", argv: ["sh", "-c", `yes | head -c ${BYTES}`] },
  { name: "empty lines", argv: ["sh", "-c", `yes '' | head -c ${BYTES}`] },
  { name: "control characters", argv: ["sh", "-c", `head -c ${BYTES} /dev/zero | tr '\\0' '\\001'`] },
  { name: "random bytes", argv: ["sh", "-c", `head -c ${BYTES} /dev/urandom`] },
  { name: "one long line", argv: [process.execPath, STREAM_AGENT, "flat", "2"] },
  { name: "stream-json", argv: [process.execPath, STREAM_AGENT, "json", "2"], claude: true },
];

function sizeOf(runDir: string, file: string): number {
  return statSync(join(runDir, file)).size;
}

describe("event log size", { concurrency: 2 }, () => {
  for (const shape of SHAPES) {
    test(`events.jsonl is at most 2× the agent's output: ${shape.name}`, async () => {
      const dir = project();
      let env = cleanEnv();
      let args = ["run", "--name", "e", "-n", "1", "x", "--", ...shape.argv];
      if (shape.claude) {
        const bin = join(dir, "claude");
        writeFileSync(bin, `#!/bin/sh\nexec ${shape.argv.map((word) => `'${word}'`).join(" ")}\n`, { mode: 0o755 });
        env = cleanEnv({ RALPH_CLAUDE_BIN: bin });
        args = ["run", "--name", "e", "-n", "1", "--agent", "claude", "x"];
      }
      const result = await runRalph(args, dir, env, 120_000);
      assert.equal(result.code, 3, result.stderr);
      const runDir = join(dir, ".ralph", "runs", "e");
      const output = sizeOf(runDir, "iter-001.log");
      assert.ok(output >= BYTES, `the agent printed its ${BYTES} bytes (${output} logged)`);
      const events = sizeOf(runDir, "events.jsonl");
      assert.ok(
        events <= 2 * output,
        `events.jsonl ${events} bytes for ${output} bytes of output (${(events / output).toFixed(1)}×)`,
      );
      assert.ok(
        readEvents(runDir).some((event) => event.type === "agent_event"),
        "the output is still shown in events",
      );
    });
  }

  test("lines are coalesced into events; --live still shows each of them, and ralph logs works", async () => {
    const dir = project();
    const result = await runRalph(
      ["run", "--live", "--name", "l", "-n", "1", "x", "--", "sh", "-c", "for i in 1 2 3 4 5; do echo line-$i; done"],
      dir,
    );
    assert.equal(result.code, 3, result.stderr);
    const texts = readEvents(join(dir, ".ralph", "runs", "l")).filter((event) => event.type === "agent_event");
    assert.equal(texts.length, 1, "five short lines make one event");
    for (let i = 1; i <= 5; i++) assert.match(result.stdout, new RegExp(`^\\s+line-${i}$`, "m"));
    const logs = await runRalph(["logs", "l"], dir);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^\[1\/1\] /m);
  });
});
