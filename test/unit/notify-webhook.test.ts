// Webhook delivery against a real HTTP server on 127.0.0.1: retries, timeouts, formats, filters, redaction.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { WEBHOOK_TIMING } from "../../src/notify/post-webhook.js";
import type { NotifyTarget } from "../../src/notify/notify-target.js";
import { DEFAULT_NOTIFY_EVENTS } from "../../src/notify/notify-target.js";
import { closedPort, notifierFor, runEnded, startReceiver } from "../fixtures/notify-harness.js";

const servers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function receiver(answer: (index: number) => number | null): ReturnType<typeof startReceiver> {
  const server = await startReceiver(answer);
  servers.push(server);
  return server;
}

const FAST = { tryMs: 2000, backoffMs: [20, 40] };

function webhook(url: string, format: "json" | "slack" = "json", events = DEFAULT_NOTIFY_EVENTS): NotifyTarget {
  return { kind: "webhook", url, format, events };
}

describe("webhook notifications", () => {
  test("a 503 then a 200 is delivered on the second try, as a JSON POST of the event", async () => {
    const server = await receiver((index) => (index === 0 ? 503 : 200));
    const { notifier, failures, delivered } = notifierFor([webhook(`${server.base}/hook`)], { webhook: FAST });
    const event = runEnded();
    notifier.notify(event);
    const report = await notifier.drain(20_000);
    assert.deepEqual(report, { settled: 1, abandoned: 0 });
    assert.deepEqual(failures, []);
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0]?.attempts, 2);
    assert.equal(server.log.requests.length, 2);
    for (const request of server.log.requests) {
      assert.equal(request.method, "POST");
      assert.equal(request.contentType, "application/json");
      assert.deepEqual(JSON.parse(request.body), event);
    }
  });

  test("a server that never answers is given up on after each try's time, three tries in all", async () => {
    const server = await receiver(() => null);
    const { notifier, failures, delivered } = notifierFor([webhook(server.base)], {
      webhook: { tryMs: 150, backoffMs: [10, 10] },
    });
    notifier.notify(runEnded());
    // Three tries of 150 ms settle well within this bound; tries that ignored their time would not.
    assert.deepEqual(await notifier.drain(5000), { settled: 1, abandoned: 0 });
    assert.deepEqual(delivered, []);
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.attempts, 3);
    assert.match(failures[0]?.error ?? "", /^no answer within 150 ms \(after 3 tries\)$/);
    assert.equal(server.log.requests.length, 3);
  });

  test("by default a try waits 5 s for an answer, and three tries are made", async () => {
    assert.equal(WEBHOOK_TIMING.tryMs, 5000);
    assert.equal(WEBHOOK_TIMING.backoffMs.length + 1, 3);
    const server = await receiver(() => null);
    const { notifier, failures } = notifierFor([webhook(server.base)]);
    notifier.notify(runEnded());
    const first = await server.log.waitForRequest(() => true, 5000);
    const firstAt = performance.now();
    await server.log.waitForRequest(() => server.log.requests.length >= 2, 20_000);
    const gap = performance.now() - firstAt;
    // The second try starts after the first try's 5 s and the first backoff pause, never sooner.
    assert.ok(
      gap >= WEBHOOK_TIMING.tryMs + (WEBHOOK_TIMING.backoffMs[0] ?? 0) - 50,
      `second try after ${Math.round(gap)} ms`,
    );
    assert.ok(first);
    const report = await notifier.drain(0);
    assert.deepEqual(report, { settled: 0, abandoned: 1 });
    assert.match(failures[0]?.error ?? "", /abandoned: the run was exiting/);
  });

  test("a refused connection is retried after each backoff pause, then reported", async () => {
    const port = await closedPort();
    const { notifier, failures } = notifierFor([webhook(`http://127.0.0.1:${port}/x`)], {
      webhook: { tryMs: 2000, backoffMs: [150, 300] },
    });
    const started = performance.now();
    notifier.notify(runEnded());
    await notifier.drain(20_000);
    const took = performance.now() - started;
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.attempts, 3);
    assert.match(failures[0]?.error ?? "", /^connection failed \(ECONNREFUSED\) \(after 3 tries\)$/);
    assert.ok(took >= 450, `the backoff pauses (150 + 300 ms) were waited: took ${Math.round(took)} ms`);
  });

  test("a 4xx is not retried", async () => {
    const server = await receiver(() => 404);
    const { notifier, failures } = notifierFor([webhook(server.base)], { webhook: FAST });
    notifier.notify(runEnded());
    await notifier.drain(20_000);
    assert.equal(server.log.requests.length, 1);
    assert.deepEqual(
      failures.map((failure) => [failure.attempts, failure.error]),
      [[1, "HTTP 404"]],
    );
  });

  test("the slack format posts one readable line as text", async () => {
    const server = await receiver(() => 200);
    const { notifier } = notifierFor([webhook(server.base, "slack")], { webhook: FAST });
    notifier.notify({ ...runEnded("MAX_ITERATIONS"), detail: "reached\nmax_iterations 5" });
    await notifier.drain(20_000);
    const body = JSON.parse(server.log.requests[0]?.body ?? "{}") as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ["text"]);
    assert.equal(body.text, "ralph run 20260101-000000-test: ended MAX_ITERATIONS (exit 3): reached max_iterations 5");
    assert.equal(server.log.requests[0]?.contentType, "application/json");
  });

  test("each target hears only its events; stalled is a run_ended with reason STALLED", async () => {
    const server = await receiver(() => 200);
    const targets = [
      webhook(`${server.base}/default`),
      webhook(`${server.base}/stalled`, "json", ["stalled"]),
      webhook(`${server.base}/human`, "json", ["needs_human"]),
    ];
    const { notifier } = notifierFor(targets, { webhook: FAST });
    const base = { v: 1, ts: "2026-01-01T00:00:00.000Z", run: "r" };
    notifier.notify({ ...base, type: "iteration_started", iteration: 1 });
    notifier.notify({ ...base, type: "needs_human", question: "Which database?" });
    notifier.notify(runEnded("DONE", "r"));
    notifier.notify(runEnded("STALLED", "r"));
    await notifier.drain(20_000);
    const heard = (path: string): string[] =>
      server.log.requests
        .filter((request) => request.url === path)
        .map((request) => {
          const event = JSON.parse(request.body) as Record<string, unknown>;
          return event.type === "run_ended" ? `run_ended ${String(event.reason)}` : String(event.type);
        })
        .sort();
    assert.deepEqual(heard("/default"), ["needs_human", "run_ended DONE", "run_ended STALLED"]);
    assert.deepEqual(heard("/stalled"), ["run_ended STALLED"]);
    assert.deepEqual(heard("/human"), ["needs_human"]);
  });

  test("a failure names the target with the URL's secrets redacted", async () => {
    const server = await receiver(() => 403);
    const port = new URL(server.base).port;
    const raw = `http://alice:pa55word@127.0.0.1:${port}/hooks/a1b2c3d4e5f6g7h8i9j0?token=tok-8c1f2e&channel=ops&sig=zz9y8x`;
    const { notifier, failures } = notifierFor([webhook(raw)], {
      webhook: FAST,
      env: { WEBHOOK_SECRET: "channel=ops" },
    });
    notifier.notify(runEnded());
    await notifier.drain(20_000);
    // Known-false control: the URL used (and received) holds every secret the report must not.
    const secrets = ["alice", "pa55word", "a1b2c3d4e5f6g7h8i9j0", "tok-8c1f2e", "zz9y8x"];
    for (const secret of secrets) assert.ok(raw.includes(secret), secret);
    assert.equal(server.log.requests[0]?.url, "/hooks/a1b2c3d4e5f6g7h8i9j0?token=tok-8c1f2e&channel=ops&sig=zz9y8x");
    assert.equal(failures.length, 1);
    const shown = JSON.stringify(failures[0]);
    for (const secret of secrets) assert.ok(!shown.includes(secret), `${secret} in ${shown}`);
    // The environment's credential values go through the run's redactor too.
    assert.equal(
      failures[0]?.target,
      `webhook http://[REDACTED]@127.0.0.1:${port}/hooks/[REDACTED]?token=[REDACTED]&[REDACTED]&sig=[REDACTED]`,
    );
    assert.equal(failures[0]?.error, "HTTP 403");
  });

  test("drain() returns by its bound while a delivery hangs, and reports it abandoned", async () => {
    const server = await receiver(() => null);
    const { notifier, failures } = notifierFor([webhook(server.base)], { webhook: { tryMs: 60_000, backoffMs: [] } });
    notifier.notify(runEnded());
    await server.log.waitForRequest(() => true, 5000);
    const started = performance.now();
    const report = await notifier.drain(200);
    const took = performance.now() - started;
    assert.deepEqual(report, { settled: 0, abandoned: 1 });
    assert.ok(took < 5000, `drain took ${Math.round(took)} ms against a 60 s try`);
    assert.deepEqual(
      failures.map((failure) => failure.error),
      ["abandoned: the run was exiting"],
    );
  });

  test("notify() neither throws nor waits, whatever the event or the listener", async () => {
    const server = await receiver(() => 500);
    const { notifier } = notifierFor([webhook(server.base)], {
      webhook: { tryMs: 2000, backoffMs: [] },
      onFailure: () => {
        throw new Error("listener failure");
      },
    });
    notifier.notify({ type: "run_ended", reason: "DONE", big: 1n } as never);
    notifier.notify(runEnded());
    const report = await notifier.drain(20_000);
    assert.deepEqual(report, { settled: 1, abandoned: 0 });
    assert.equal(server.log.requests.length, 1);
  });
});
