// `ralph ui` in a real browser (Debian's chromium through playwright-core): the runs table, a run's live
// output, the buttons on a real process tree, and the guard against other sites.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { cleanupAfterTests } from "../fixtures/e2e-cleanup.js";
import { agentCommand, procRunning, survivors, waitForJson, type Ready } from "../fixtures/e2e-harness.js";
import { waitFor, waitForFile, within } from "../helpers/wait.js";
import { browserAvailable, cutCells, offScreen, openBrowser, screenshot, startUi } from "../helpers/browser.js";
import { cleanEnv, fakeAgent, runRalph } from "../helpers/cli.js";
import { git, isolateGitConfig, tempRepo } from "../helpers/git-repo.js";

const cleanup = cleanupAfterTests();
let browser: { context: BrowserContext; close: () => Promise<void> } | null = null;
let available = true;
// A name only this browser resolves, to 127.0.0.1: a DNS-rebinding page's requests carry it as Host.
const REBIND_HOST = "rebind.test";

before(async () => {
  if (!existsSync("/usr/bin/chromium") && process.env.RALPH_SKIP_BROWSER_TESTS === "1") return;
  browser = await openBrowser([`--host-resolver-rules=MAP ${REBIND_HOST} 127.0.0.1`]);
});
after(async () => browser?.close());

async function page(): Promise<Page> {
  assert.ok(browser);
  return browser.context.newPage();
}

const runDirOf = (dir: string, id: string) => join(dir, ".ralph", "runs", id);
const rowState = (p: Page, id: string) => p.locator(`a.row[data-run="${id}"]`).getAttribute("data-state");

describe("ralph ui in chromium", () => {
  test("the table shows runs and updates when a run ends", async (t) => {
    if (!(available = browserAvailable(t))) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const first = await within(
      cleanup.ralph(["run", "--name", "ended", "-n", "1", "go", ...fakeAgent("--print", "hello")], dir).done,
      20_000,
      "the first run",
    );
    assert.equal(first.code, 3, first.stderr);
    const gate = join(files, "gate");
    const live = cleanup.ralph(["run", "--name", "live", "-n", "1", "go", ...fakeAgent("--wait-for", gate)], dir);
    await waitForFile(`${gate}.started`);
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    await p.goto(ui.url);
    assert.equal(new URL(p.url()).search, "", "the token left the address bar");
    await p.locator('a.row[data-run="live"][data-state="running"]').waitFor({ timeout: 10_000 });
    assert.equal(await rowState(p, "ended"), "MAX_ITERATIONS");
    assert.equal(await p.locator('a.row[data-run="live"] .cell.iteration').textContent(), "1/1");
    await screenshot(p, "runs-table");
    writeFileSync(gate, "");
    assert.equal((await within(live.done, 20_000, "the live run")).code, 3);
    // The page learns of the end by itself: no reload, no polling.
    await p.locator('a.row[data-run="live"][data-state="MAX_ITERATIONS"]').waitFor({ timeout: 5_000 });
    await p.fill("#filter", "live");
    await p.locator("a.row").first().waitFor();
    assert.deepEqual(await p.locator("a.row").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run"))), [
      "live",
    ]);
    await p.close();
  });

  test("the run page streams the agent's output as --live prints it", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const tag = cleanup.tag();
    cleanup.ralph(["run", "--name", "x", "-n", "1", "go", ...agentCommand(tag, files, "--tick", "150", "200")], dir);
    await waitForFile(join(runDirOf(dir, "x"), "events.jsonl"));
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    const requests: string[] = [];
    p.on("request", (request) => requests.push(request.url()));
    await p.goto(ui.url.replace("/?", "/run/0/x?"));
    const ticks = p.locator("#output .line", { hasText: "tick" });
    await ticks.first().waitFor({ timeout: 10_000 });
    const seen = await ticks.count();
    const requestsBefore = requests.length;
    // Lines keep arriving while the page stays open.
    await p.locator("#output .line", { hasText: `tick ${seen + 3}` }).waitFor({ timeout: 10_000 });
    assert.deepEqual(requests.slice(requestsBefore), [], "the page never polls: new lines come down the open stream");
    assert.equal(await p.locator("#output .line", { hasText: "tick 1" }).first().textContent(), "  tick 1");
    assert.ok((await p.locator("#log .line").count()) > 0, "the run log is shown");
    await screenshot(p, "run-page-streaming");
    await p.close();
  });

  test("stop now ends a real running tree, and continue starts a run the page can stop again", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const tag = cleanup.tag();
    const ralph = cleanup.ralph(
      ["run", "--name", "x", "-n", "1", "--grace", "2s", "go", ...agentCommand(tag, files, "--tree", "mixed")],
      dir,
    );
    const ready = await waitForJson<Ready>(join(files, "ready-1.json"), 20_000, ralph);
    assert.ok(survivors(tag).length >= 10, `${survivors(tag).length} processes in the tree`);
    const ui = await startUi(cleanup, [dir], dir);
    // The page's clock is the test's: a confirmation's 5 s run out exactly when the test says. A browser of its
    // own, since a clock once installed stays with its browser context.
    const own = await openBrowser();
    t.after(() => own.close());
    const p = await own.context.newPage();
    await p.clock.install();
    await p.goto(ui.url.replace("/?", "/run/0/x?"));
    await p.clock.pauseAt(Date.now() + 1_000);
    await p.locator('#state[data-state="running"]').waitFor({ timeout: 10_000 });
    await screenshot(p, "run-page-running");
    // Stop now asks first: one press ends nothing, and the question lapses after 5 s.
    const stopNow = p.locator('button[data-action="stop-now"]');
    await p.click('button[data-action="stop-now"]');
    assert.match((await stopNow.textContent()) ?? "", /Really stop now\?/);
    assert.match((await p.locator("#message").textContent()) ?? "", /press Stop now again to confirm/);
    await p.clock.runFor(5_000);
    assert.equal(await stopNow.textContent(), "Stop now", "the question lapsed");
    assert.equal(ralph.running(), true, "the first press stopped nothing");
    await p.click('button[data-action="stop-now"]');
    await p.click('button[data-action="stop-now"]');
    const ended = await within(ralph.done, 20_000, "ralph after stop now");
    assert.equal(ended.code, 0, ended.stderr);
    assert.deepEqual(survivors(tag), [], "no process of the agent tree survives");
    assert.deepEqual(ready.procs.filter(procRunning), [], "every recorded pid is gone");
    await p.locator('#state[data-state="STOPPED"]').waitFor({ timeout: 5_000 });

    // Continue, from the page, as a detached `ralph continue x -n 2`. The page shows the server's answer once
    // it arrives, which can be after the stream already said "running": wait for the answer, then for the page.
    await p.fill("#continue-n", "2");
    const answered = p.waitForResponse(
      (response) => response.request().method() === "POST" && new URL(response.url()).pathname.endsWith("/continue"),
      { timeout: 30_000 },
    );
    await p.click('button[data-action="continue"]');
    const again = await waitForJson<Ready>(join(files, "ready-2.json"), 20_000);
    const runner = cleanup.runner(runDirOf(dir, "x"));
    await p.locator('#state[data-state="running"]').waitFor({ timeout: 10_000 });
    const said = ((await (await answered).json()) as { message?: string }).message ?? "";
    assert.match(said, /^run x continues \(pid \d+\)$/);
    await p.locator("#message", { hasText: said }).waitFor({ timeout: 5_000 });
    const stopAnswered = p.waitForResponse(
      (response) => response.request().method() === "POST" && new URL(response.url()).pathname.endsWith("/stop-now"),
      { timeout: 30_000 },
    );
    // Pressed again 4 s after the first stop's question was asked: that question's 5 s run out between the two
    // presses here, and must not take back the question this press asks.
    await p.clock.runFor(4_000);
    await p.click('button[data-action="stop-now"]');
    await p.clock.runFor(2_000);
    assert.match((await stopNow.textContent()) ?? "", /Really stop now\?/, "an earlier question's end took this one");
    await p.click('button[data-action="stop-now"]');
    const stopSaid = ((await (await stopAnswered).json()) as { message?: string }).message ?? "";
    await waitFor(
      () => !procRunning(runner),
      () =>
        `the continued runner (pid ${runner.pid}) to end; the page's stop now was answered "${stopSaid}"; ` +
        `status.json: ${readFileSync(join(runDirOf(dir, "x"), "status.json"), "utf8")}`,
      20_000,
    );
    assert.deepEqual(survivors(tag), []);
    assert.deepEqual(again.procs.filter(procRunning), []);
    await p.locator('#state[data-state="STOPPED"]').waitFor({ timeout: 5_000 });
    // The iterations come down the events stream, which may reach the page after the state did.
    await p.locator("#iterations tr").nth(1).waitFor({ timeout: 5_000 });
    assert.equal(await p.locator("#iterations tr").count(), 2);
    await p.close();
  });

  test("the answer box resumes a needs_human run", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const record = join(files, "prompts");
    const args = [
      "--record",
      record,
      "--ask",
      "Which database?",
      "--ask-in",
      "1",
      "--promise",
      "FIN",
      "--promise-from",
      "2",
    ];
    const run = cleanup.ralph(
      ["run", "--name", "q", "-n", "3", "--completion-promise", "FIN", "go", ...fakeAgent(...args)],
      dir,
    );
    await waitFor(
      () =>
        existsSync(join(runDirOf(dir, "q"), "events.jsonl")) &&
        readFileSync(join(runDirOf(dir, "q"), "events.jsonl"), "utf8").includes('"type":"needs_human"'),
      "the run to ask",
      20_000,
    );
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    await p.goto(ui.url);
    await p
      .locator('a.row[data-run="q"][data-state="needs_human"] .cell.question', { hasText: "Which database?" })
      .waitFor({ timeout: 10_000 });
    await p.click('a.row[data-run="q"]');
    await p.locator("#question:not([hidden])").waitFor({ timeout: 10_000 });
    assert.equal(await p.locator("#question-text").textContent(), "Which database?");
    await screenshot(p, "run-page-question");
    // Longer than a small request body: an answer may take up to the 16 KB `ralph answer` takes.
    const answer = `Postgres.${" Keep the schema in db/.".repeat(300)}`;
    await p.fill("#answer", answer);
    await p.click('button[data-action="answer"]');
    await p.locator("#message", { hasText: "answer sent: run q goes on" }).waitFor({ timeout: 5_000 });
    const ended = await within(run.done, 20_000, "the answered run");
    assert.equal(ended.code, 0, ended.stderr);
    assert.ok(
      (readFileSync(record, "utf8").split("\0")[1] ?? "").endsWith(
        `You asked: Which database?\n\nAnswer: ${answer.trim()}\n`,
      ),
    );
    await p.locator('#state[data-state="DONE"]').waitFor({ timeout: 5_000 });
    await p.locator("#question[hidden]").waitFor({ state: "attached", timeout: 5_000 });
    // The "answer sent: … goes on" note was about the live run: once it ended, it is gone.
    assert.equal(await p.locator("#message").textContent(), "");
    // Nothing left to answer (the box is gone): the same code as `ralph answer` refuses a late answer, and says why.
    const csrf = (await p.locator('meta[name="csrf"]').getAttribute("content")) ?? "";
    const late = await p.request.fetch(`${ui.origin}/api/run/0/q/answer`, {
      method: "POST",
      headers: { Origin: ui.origin, "X-Ralph-CSRF": csrf, "Content-Type": "application/json" },
      data: '{"text":"again"}',
    });
    assert.deepEqual(
      [late.status(), await late.text()],
      [409, JSON.stringify({ message: "run q is not waiting for an answer (DONE); nothing to answer" })],
    );
    assert.equal(existsSync(join(runDirOf(dir, "q"), "ANSWER")), false);
    const huge = await p.request.fetch(`${ui.origin}/api/run/0/q/answer`, {
      method: "POST",
      headers: { Origin: ui.origin, "X-Ralph-CSRF": csrf, "Content-Type": "application/json" },
      data: JSON.stringify({ text: "x".repeat(200 * 1024) }),
    });
    assert.deepEqual(
      [huge.status(), await huge.text()],
      [400, JSON.stringify({ message: "the request body must be a JSON object of at most 128 KB" })],
    );
    await p.close();
  });

  test("without the token nothing is served; with it, a cookie replaces it", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir } = cleanup.project("ralph-ui-");
    const ui = await startUi(cleanup, [dir], dir);
    assert.ok(browser);
    // Cookies are named after the port: no earlier test's cookie is one this server takes.
    const p = await page();
    for (const path of ["/", "/assets/app.css", "/assets/js/runs-page.js", "/api/runs/stream", "/run/0/x"]) {
      const response = await p.request.fetch(`${ui.origin}${path}`, { maxRedirects: 0 });
      assert.equal(response.status(), 401, path);
    }
    const wrong = await p.request.fetch(`${ui.origin}/?token=${"x".repeat(ui.token.length)}`, { maxRedirects: 0 });
    assert.equal(wrong.status(), 401);
    // Control: the printed URL works, and later requests ride on the HttpOnly cookie.
    const response = await p.goto(ui.url);
    assert.equal(response?.status(), 200);
    const cookies = await browser.context.cookies(ui.origin);
    const cookie = cookies.find((c) => c.name === `ralph_ui_${ui.port}`);
    assert.ok(cookie?.httpOnly && cookie.sameSite === "Strict", JSON.stringify(cookies));
    assert.equal((await p.request.fetch(`${ui.origin}/assets/app.css`)).status(), 200);
    const headers = response?.headers() ?? {};
    assert.match(headers["content-security-policy"] ?? "", /script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(headers["referrer-policy"], "no-referrer");
    assert.equal(headers["x-content-type-options"], "nosniff");
    await p.close();
    // Ctrl-C (or SIGTERM) ends the dashboard cleanly, open streams and all.
    ui.started.child.kill("SIGTERM");
    assert.equal((await within(ui.started.done, 5000, "ralph ui after SIGTERM")).code, 0);
  });

  test("a foreign Host is refused (DNS rebinding)", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir } = cleanup.project("ralph-ui-");
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    const rebound = await p.goto(ui.url.replace("127.0.0.1", REBIND_HOST));
    assert.equal(rebound?.status(), 421);
    assert.match((await p.locator("body").textContent()) ?? "", /Host rebind\.test:\d+ is not this dashboard/);
    // Control: the same browser, the same token, the dashboard's own name.
    assert.equal((await p.goto(ui.url))?.status(), 200);
    await p.close();
  });

  test("a cross-origin POST is refused; the page's own POST works", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const gate = join(files, "gate");
    const live = cleanup.ralph(["run", "--name", "x", "-n", "1", "go", ...fakeAgent("--wait-for", gate)], dir);
    await waitForFile(`${gate}.started`);
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    await p.goto(ui.url);
    // Another site on this machine (another port: same site, other origin) posting with the cookie.
    const attack = `<!doctype html><script>
      fetch(${JSON.stringify(`${ui.origin}/api/run/0/x/pause`)}, { method: "POST", mode: "no-cors", credentials: "include", headers: { "Content-Type": "text/plain" }, body: "{}" })
        .then(() => (document.title = "sent"), () => (document.title = "failed"));
    </script>`;
    const hits: string[] = [];
    const evil: Server = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(attack);
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      const evilPage = await page();
      await evilPage.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      await evilPage.waitForFunction('document.title === "sent" || document.title === "failed"', undefined, {
        timeout: 10_000,
      });
      const forged = await evilPage.request.fetch(`${ui.origin}/api/run/0/x/pause`, {
        method: "POST",
        headers: {
          Origin: "http://evil.example",
          "X-Ralph-CSRF": (await p.locator('meta[name="csrf"]').getAttribute("content")) ?? "",
          "Content-Type": "application/json",
        },
        data: "{}",
      });
      assert.equal(forged.status(), 403, "a valid CSRF token does not help a foreign Origin");
      assert.equal(existsSync(join(runDirOf(dir, "x"), "PAUSE")), false, "no PAUSE from another origin");
      await evilPage.close();
    } finally {
      evil.close();
    }
    // Control: the dashboard's own button goes through.
    await p.goto(ui.url.replace("/?", "/run/0/x?"));
    await p.locator('#state[data-state="running"]').waitFor({ timeout: 10_000 });
    await p.click('button[data-action="pause"]');
    await waitForFile(join(runDirOf(dir, "x"), "PAUSE"));
    await p.click('button[data-action="stop"]');
    writeFileSync(gate, "");
    assert.equal((await within(live.done, 20_000, "the run")).code, 0);
    await p.close();
  });
});

describe("the dashboard's look, in chromium", () => {
  after(isolateGitConfig());

  test("runs table: newest first, a status icon per state, a dry run marked, nothing cut at 900 px", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const ended = await runRalph(["run", "-n", "1", "go", ...fakeAgent()], dir);
    assert.equal(ended.code, 3, ended.stderr);
    const failed = await runRalph(
      ["run", "--name", "failing-run", "-n", "1", "--max-failures", "1", "go", ...fakeAgent("--exit", "1")],
      dir,
    );
    assert.equal(failed.code, 1, failed.stderr);
    assert.equal(
      (
        await runRalph(
          ["run", "--name", "dry", "--dry-run", "--dry-run-delay", "0", "-n", "1", "go", ...fakeAgent()],
          dir,
        )
      ).code,
      0,
    );
    const gate = join(files, "gate");
    const live = cleanup.ralph(["run", "--name", "live", "-n", "1", "go", ...fakeAgent("--wait-for", gate)], dir);
    await waitForFile(`${gate}.started`);
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    await p.setViewportSize({ width: 900, height: 600 });
    await p.goto(ui.url);
    await p.locator('a.row[data-run="live"][data-state="running"]').waitFor({ timeout: 10_000 });
    const order = await p.locator("a.row").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run")));
    assert.deepEqual(order.slice(0, 3), ["live", "dry", "failing-run"], "newest first");
    const icon = (id: string) =>
      p
        .locator(`a.row[data-run="${id}"] .badge`)
        .evaluate((badge) => [badge.getAttribute("data-tone"), badge.querySelector(".icon")?.textContent]);
    assert.deepEqual(await icon("live"), ["running", "●"]);
    assert.deepEqual(await icon("failing-run"), ["bad", "✗"]);
    assert.deepEqual(await icon("dry"), ["neutral", "○"]);
    assert.equal(await p.locator('a.row[data-run="dry"] .cell.state').textContent(), "○ DRY_RUN");
    assert.equal(await p.locator('a.row[data-run="failing-run"] .badge .dry').count(), 0);
    assert.deepEqual(
      await cutCells(p, "a.row .cell.id, a.row .cell.state, a.row .cell.age, a.row .cell.iteration, a.row .cell.spend"),
      [],
      "no id, state, iteration, spend or age cut",
    );
    assert.deepEqual(
      await offScreen(p, "#head .cell.reason, #head .cell.question", 900),
      [],
      "reason and question on screen at 900 px",
    );
    await screenshot(p, "runs-table-900", { fullPage: false });
    writeFileSync(gate, "");
    await within(live.done, 20_000, "the live run");
    await p.close();
  });

  test("run page: no empty axes, Resume only when paused, CPU and memory shown, spend honest, iterations expand to their output", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir, files } = cleanup.project("ralph-ui-");
    const gate = join(files, "gate");
    const run = cleanup.ralph(
      ["run", "--name", "x", "-n", "2", "go", ...fakeAgent("--print", "working on it", "--wait-for", gate)],
      dir,
    );
    await waitForFile(`${gate}.started`);
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    await p.goto(ui.url.replace("/?", "/run/0/x?"));
    await p.locator('#state[data-state="running"]').waitFor({ timeout: 10_000 });
    // Nothing finished yet: each chart says so instead of drawing axes of zeros.
    assert.equal(await p.locator("#timeline .chart-empty").count(), 1);
    assert.equal(await p.locator("#spend .chart-empty").count(), 1);
    assert.equal(await p.locator("#timeline svg, #spend svg").count(), 0);
    assert.equal(
      await p.locator('button[data-action="resume"]').isDisabled(),
      true,
      "Resume is off while the run runs",
    );
    assert.equal(await p.locator('button[data-action="pause"]').isDisabled(), false);
    writeFileSync(gate, "");
    assert.equal((await within(run.done, 20_000, "the run")).code, 3);
    await p.locator('#state[data-state="MAX_ITERATIONS"]').waitFor({ timeout: 10_000 });
    await p.locator("#iterations tr[data-iteration]").nth(1).waitFor({ timeout: 5_000 });
    assert.equal(await p.locator("#timeline svg").count(), 1);
    assert.equal(await p.locator("#spend .chart-empty").count(), 1, "an agent that reports no cost: no spend chart");
    assert.equal(await p.locator('[data-fact="spend"]').textContent(), "no cost reported");
    assert.match((await p.locator('#iterations tr[data-iteration="1"] td.duration').textContent()) ?? "", /^\d+\.\ds$/);
    const supervised = readFileSync(join(runDirOf(dir, "x"), "events.jsonl"), "utf8").includes(
      '"resources":{"cpu_seconds"',
    );
    if (supervised) {
      assert.match((await p.locator('#iterations tr[data-iteration="1"] td.cpu').textContent()) ?? "", /^\d+\.\ds$/);
      assert.match(
        (await p.locator('#iterations tr[data-iteration="1"] td.memory').textContent()) ?? "",
        /^\d+\.\d MiB$/,
      );
    }
    await p.click('#iterations tr[data-iteration="1"] button.expand');
    const shown = (await p.locator('tr[data-output-of="1"] pre').textContent()) ?? "";
    assert.match(shown, /working on it/);
    assert.doesNotMatch(shown, /iteration 2/);
    await screenshot(p, "run-page-ended");
    await p.close();
  });

  test("a review's verdict is on the timeline and in the iterations table", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const repo = tempRepo();
    const { files } = cleanup.project("ralph-ui-review-");
    const reviewer = [
      process.execPath,
      fileURLToPath(new URL("../fixtures/review-agent.js", import.meta.url)),
      "--answers",
      "changes,approve",
      "--state",
      files,
    ];
    writeFileSync(
      join(repo, "ralph.yaml"),
      `completion_criteria:\n  - type: review\n    agent: command\n    check: fixture reviewer\n    command: ${JSON.stringify(reviewer)}\n`,
    );
    const worker = [
      "--",
      "sh",
      "-c",
      `cat > /dev/null; echo "line $RALPH_ITERATION" >> work.txt; echo '<promise>DONE</promise>'`,
    ];
    const env = cleanEnv({ GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "", GIT_CONFIG_NOSYSTEM: "1" });
    const result = await runRalph(
      ["run", "--name", "rv", "-n", "3", "--completion-promise", "DONE", "go", ...worker],
      repo,
      env,
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const ui = await startUi(cleanup, [repo], repo);
    const p = await page();
    await p.goto(ui.url.replace("/?", "/run/0/rv?"));
    const first = p.locator('#iterations tr[data-iteration="1"] td[data-review]');
    await first.waitFor({ timeout: 10_000 });
    assert.equal(await first.getAttribute("data-review"), "changes");
    assert.match(
      (await first.textContent()) ?? "",
      /review changes \(fixture reviewer\): FINDING-1: work\.txt needs a usage section/,
    );
    assert.equal(
      await p.locator('#iterations tr[data-iteration="2"] td[data-review]').getAttribute("data-review"),
      "approve",
    );
    assert.equal(await p.locator('#timeline rect[data-iteration="1"]').getAttribute("data-review"), "changes");
    assert.match(
      (await p.locator('#timeline rect[data-iteration="2"] title').textContent()) ?? "",
      /review approve \(fixture reviewer\)/,
    );
    await p.close();
  });

  test("a --parallel parent's page lists its children with their states and branches, linked", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const repo = tempRepo();
    writeFileSync(join(repo, "TASKS.md"), "- [ ] one\n- [ ] two\n");
    git(repo, "add", "TASKS.md");
    git(repo, "commit", "-q", "-m", "tasks");
    const env = cleanEnv({
      GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
      GIT_CONFIG_NOSYSTEM: "1",
      RALPH_DEMO_DELAY_MS: "0",
    });
    assert.equal(
      (
        await runRalph(
          ["run", "--agent", "demo", "--tasks", "TASKS.md", "--parallel", "2", "-n", "2", "--name", "par", "go"],
          repo,
          env,
        )
      ).code,
      0,
    );
    const ui = await startUi(cleanup, [repo], repo);
    const p = await page();
    await p.goto(ui.url.replace("/?", "/run/0/par?"));
    await p.locator('#child-list tr[data-child="par-2"]').waitFor({ timeout: 10_000 });
    const children = await p
      .locator("#child-list tr")
      .evaluateAll((rows) =>
        rows.map((row) => [
          row.getAttribute("data-child"),
          row.getAttribute("data-state"),
          row.querySelector("td.branch")?.textContent,
          row.querySelector("a")?.getAttribute("href"),
        ]),
      );
    assert.deepEqual(
      children,
      [
        ["par-1", "DONE", "ralph/par-1", "/run/0/par-1"],
        ["par-2", "DONE", "ralph/par-2", "/run/0/par-2"],
      ].sort((a, b) => children.findIndex((c) => c[0] === a[0]) - children.findIndex((c) => c[0] === b[0])),
    );
    assert.equal(await p.locator('[data-fact="iteration"]').textContent(), "2 runs", "as ralph list says it");
    assert.deepEqual(
      await p.locator("#child-list tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-merge"))),
      ["merged", "merged"],
    );
    assert.match((await p.locator('[data-fact="spend"]').textContent()) ?? "", /demo agent's pretend figure/);
    await screenshot(p, "run-page-parent");
    await p.click('#child-list a[href="/run/0/par-1"]');
    await p.locator('a[data-fact="parent run"]', { hasText: "par" }).waitFor({ timeout: 10_000 });
    await p.close();
  });

  test("runs list at 1400 px: children right under their parent, the agent's name whole, a --parallel parent's iteration column as ralph list says it", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const repo = tempRepo();
    writeFileSync(join(repo, "TASKS.md"), "- [ ] one\n- [ ] two\n");
    git(repo, "add", "TASKS.md");
    git(repo, "commit", "-q", "-m", "tasks");
    const env = cleanEnv({
      GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "",
      GIT_CONFIG_NOSYSTEM: "1",
      RALPH_DEMO_DELAY_MS: "0",
    });
    assert.equal(
      (
        await runRalph(
          ["run", "--name", "cmd", "-n", "1", "go", "--", "sh", "-c", "cat > /dev/null; echo hi"],
          repo,
          env,
        )
      ).code,
      3,
    );
    assert.equal(
      (
        await runRalph(
          ["run", "--agent", "demo", "--tasks", "TASKS.md", "--parallel", "2", "-n", "2", "--name", "par", "go"],
          repo,
          env,
        )
      ).code,
      0,
    );
    const ui = await startUi(cleanup, [repo], repo);
    const p = await page();
    await p.setViewportSize({ width: 1400, height: 700 });
    await p.goto(ui.url);
    await p.locator('a.row[data-run="par-2"]').waitFor({ timeout: 10_000 });
    const order = await p.locator("a.row").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-run")));
    // Newest first, and each child right under its parent (the children started after it, so they sorted above).
    assert.equal(
      order.indexOf("par") + 1,
      order.indexOf(order.find((id) => id?.startsWith("par-")) ?? ""),
      order.join(" "),
    );
    assert.deepEqual(
      order
        .filter((id) => id?.startsWith("par"))
        .slice(1)
        .sort(),
      ["par-1", "par-2"],
    );
    assert.ok(
      order.indexOf("cmd") > order.indexOf("par-2") || order.indexOf("cmd") < order.indexOf("par"),
      order.join(" "),
    );
    assert.deepEqual(await cutCells(p, "a.row .cell.agent"), [], "the agent column is not cut at 1400 px");
    assert.equal(await p.locator('a.row[data-run="cmd"] .cell.agent').textContent(), "command");
    assert.equal(await p.locator('a.row[data-run="par"] .cell.iteration').textContent(), "2 runs");
    assert.equal(await p.locator('a.row[data-run="par-1"] .cell.iteration').textContent(), "1/2");
    await screenshot(p, "runs-table-1400", { fullPage: false });
    await p.close();
  });

  test("a 0 s iteration: the durations chart is scaled to a second, its bar short; a child whose merge was abandoned is not shown DONE", async (t) => {
    if (!available || !browserAvailable(t)) return;
    const { dir } = cleanup.project("ralph-ui-");
    assert.equal((await runRalph(["run", "--name", "z", "-n", "1", "go", "--", "true"], dir)).code, 3);
    // Exactly 0 s, whatever the machine's load made of `true`: the iteration's recorded duration.
    const zEvents = join(dir, ".ralph", "runs", "z", "events.jsonl");
    writeFileSync(
      zEvents,
      readFileSync(zEvents, "utf8").replace(
        /("type":"iteration_ended".*?"duration_ms":)\d+/,
        (_all, head: string) => `${head}0`,
      ),
    );
    // A parent whose second child's merge was abandoned: the parent's events say so, the child itself ended DONE.
    const runs = join(dir, ".ralph", "runs");
    assert.equal((await runRalph(["run", "--name", "q", "-n", "1", "go", "--", "true"], dir)).code, 3);
    assert.equal(
      (
        await runRalph(
          [
            "run",
            "--name",
            "q-1",
            "-n",
            "1",
            "--completion-promise",
            "OK",
            "go",
            "--",
            "sh",
            "-c",
            "cat >/dev/null; echo '<promise>OK</promise>'",
          ],
          dir,
        )
      ).code,
      0,
    );
    assert.equal(
      (
        await runRalph(
          [
            "run",
            "--name",
            "q-2",
            "-n",
            "1",
            "--completion-promise",
            "OK",
            "go",
            "--",
            "sh",
            "-c",
            "cat >/dev/null; echo '<promise>OK</promise>'",
          ],
          dir,
        )
      ).code,
      0,
    );
    for (const child of ["q-1", "q-2"]) {
      const file = join(runs, child, "status.json");
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), parent: "q" }));
    }
    const events = join(runs, "q", "events.jsonl");
    const line = (fields: Record<string, unknown>) =>
      `${JSON.stringify({ v: 1, ts: new Date().toISOString(), run: "q", ...fields })}\n`;
    writeFileSync(
      events,
      readFileSync(events, "utf8") +
        line({ type: "child_merged", child: "q-1", task: "1", commit: "a".repeat(40), resolves: 0 }) +
        line({
          type: "merge_abandoned",
          child: "q-2",
          task: "2",
          reason: "conflicts in a.txt, still after 2 resolve iteration(s)",
          resolves: 2,
        }),
    );
    const ui = await startUi(cleanup, [dir], dir);
    const p = await page();
    await p.goto(ui.url.replace("/?", "/run/0/z?"));
    await p.locator("#timeline svg").waitFor({ timeout: 10_000 });
    const ticks = await p.locator("#timeline text.tick").evaluateAll((nodes) => nodes.map((node) => node.textContent));
    assert.deepEqual(ticks.slice(0, 3), ["0.0s", "0.5s", "1.0s"], "a scale of a second, not 0.0s three times");
    const bar = await p
      .locator('#timeline rect[data-iteration="1"]')
      .evaluate((rect) => Number(rect.getAttribute("height")));
    assert.ok(bar < 20, `the 0 s bar is short (${bar} px of 132)`);
    await p.goto(ui.url.replace("/?", "/run/0/q?"));
    await p.locator('#child-list tr[data-child="q-2"][data-merge="abandoned"]').waitFor({ timeout: 10_000 });
    const state = (id: string) => p.locator(`#child-list tr[data-child="${id}"] td.state`).textContent();
    assert.equal(await state("q-1"), "✓ DONE", "a merged child is DONE");
    assert.equal(await state("q-2"), "✗ not merged");
    assert.match(
      (await p.locator('#child-list tr[data-child="q-2"] td.merge').textContent()) ?? "",
      /^abandoned: conflicts in a\.txt/,
    );
    await p.close();
  });
});
