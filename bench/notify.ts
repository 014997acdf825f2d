// Notifications' cost to the loop: ralph running `true` 100 times with a webhook hearing every iteration_started
// and iteration_ended (a local server that answers at once), against the same run without a target.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, eventTime, readEvents, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { retryOnce, Samples } from "./stats.js";

const ITERATIONS = 100;

async function startServer(): Promise<{ server: Server; url: string; received: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received: () => count };
}

/** Milliseconds from the first iteration_started to run_ended of a finished run. */
function loopMs(dir: string, id: string): number {
  const events = readEvents(runDir(dir, id));
  const first = eventTime(events, (event) => event.type === "iteration_started");
  const last = eventTime(events, (event) => event.type === "run_ended");
  if (first === null || last === null) throw new Error(`run ${id} recorded no loop`);
  return last - first;
}

/** Alternates runs with and without the webhook target. */
export async function benchNotify(runs: number, log: (line: string) => void): Promise<Row[]> {
  const plain = scratchDir("notify-plain");
  const notified = scratchDir("notify-hook");
  const { server, url, received } = await startServer();
  writeFileSync(
    join(notified, "ralph.yaml"),
    `notify:\n  - webhook: ${url}\n    events: [iteration_started, iteration_ended, run_ended]\n`,
  );
  const samples = new Samples();
  let attempt = 0;
  const timeRun = async (dir: string) => {
    const id = `notify-${++attempt}`;
    const ralph = startRalph(
      ["run", "--name", id, "-n", String(ITERATIONS), "--agent", "command", "notify", "--", "true"],
      dir,
      { env: cleanEnv() },
    );
    const exit = await ralph.exited;
    if (exit.code !== 3)
      throw new Error(`ralph -n ${ITERATIONS} -- true: exit ${exit.code ?? exit.signal} (expected 3): ${exit.stderr}`);
    return loopMs(dir, id) / ITERATIONS;
  };
  try {
    for (let round = 0; round < runs; round++) {
      const before = received();
      const withHook = await retryOnce("notify (webhook)", () => timeRun(notified), log);
      const delivered = received() - before;
      const without = await retryOnce("notify (none)", () => timeRun(plain), log);
      samples.add("with", withHook);
      samples.add("without", without);
      log(
        `notify: round ${round + 1}/${runs}: ${withHook.toFixed(2)} ms/iteration with a webhook (${delivered} posts), ${without.toFixed(2)} without`,
      );
    }
  } finally {
    server.close();
    server.closeAllConnections();
  }
  const without = samples.get("without");
  return [
    {
      group: `Notifications, ${ITERATIONS} iterations of \`true\``,
      figure: "ms per iteration with a webhook hearing iteration_started and iteration_ended",
      unit: "ms",
      value: samples.get("with"),
      ...(without ? { baseline: { label: "no notification target", value: without } } : {}),
      note: "first iteration_started → run_ended / 100; the server answers at once",
      command: `ralph run -n ${ITERATIONS} --agent command x -- true, with and without a notify: webhook in ralph.yaml`,
    },
  ];
}
