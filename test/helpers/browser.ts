// Real-browser tests: Debian's chromium driven by playwright-core, and `ralph ui` started for a test.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { chromium, type BrowserContext } from "playwright-core";
import type { Cleanup, Started } from "../fixtures/e2e-cleanup.js";

/** The browser the tests drive: Debian's chromium package. */
export const CHROMIUM = "/usr/bin/chromium";
/** Where screenshots of the main views are kept (gitignored). */
export const ARTIFACTS = join(process.cwd(), "test-artifacts");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Whether the browser tests can run: true when chromium is there; false (with a loud skip) when it is
 * missing and RALPH_SKIP_BROWSER_TESTS=1; otherwise a failure naming what to install.
 */
export function browserAvailable(t: TestContext): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium), or set RALPH_SKIP_BROWSER_TESTS=1 to skip the browser tests`;
  if (process.env.RALPH_SKIP_BROWSER_TESTS !== "1") throw new Error(message);
  process.stderr.write(`\n*** SKIPPING BROWSER TESTS: ${message} ***\n\n`);
  t.skip("SKIPPED: no chromium and RALPH_SKIP_BROWSER_TESTS=1");
  return false;
}

/** A fresh headless chromium profile; closing it removes the profile. */
export async function openBrowser(extraFlags: string[] = []): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "ralph-chromium-"));
  // launchPersistentContext is how playwright takes a --user-data-dir of our own.
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: [...FLAGS, ...extraFlags], viewport: { width: 1280, height: 800 } });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A started `ralph ui`: its process, the printed URL, and its origin. */
export interface UiServer {
  started: Started;
  url: string;
  origin: string;
  token: string;
  port: number;
}

/** Starts `ralph ui` for `projects` (SIGKILLed at cleanup) and waits for the URL it prints. */
export async function startUi(cleanup: Cleanup, projects: string[], cwd: string): Promise<UiServer> {
  const started = cleanup.ralph(["ui", ...projects.flatMap((dir) => ["--project", dir])], cwd);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const url = /^(http:\/\/\S+)$/m.exec(started.output())?.[1];
    if (url) {
      const parsed = new URL(url);
      return { started, url, origin: parsed.origin, token: parsed.searchParams.get("token") ?? "", port: Number(parsed.port) };
    }
    if (!started.running() || Date.now() > deadline) throw new Error(`ralph ui printed no URL:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Saves a screenshot of `page` as test-artifacts/NAME.png. */
export async function screenshot(page: { screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown> }, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
