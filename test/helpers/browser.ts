// Real-browser tests: whether chromium is there, `ralph ui` started for a test, screenshots kept.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { Page } from "playwright-core";
import type { Cleanup, Started } from "../fixtures/e2e-cleanup.js";
import { CHROMIUM } from "./chromium.js";
import { waitFor } from "./wait.js";

export { CHROMIUM, openBrowser } from "./chromium.js";

/** Where screenshots of the main views are kept (gitignored). */
export const ARTIFACTS = join(process.cwd(), "test-artifacts");

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
  const printed = (): string | undefined => {
    const url = /^(http:\/\/\S+)$/m.exec(started.output())?.[1];
    if (!url && !started.running()) throw new Error(`ralph ui exited without printing its URL:\n${started.output()}`);
    return url;
  };
  const url = await waitFor(printed, () => `ralph ui to print its URL; its output:\n${started.output()}`, 20_000);
  const parsed = new URL(url);
  return {
    started,
    url,
    origin: parsed.origin,
    token: parsed.searchParams.get("token") ?? "",
    port: Number(parsed.port),
  };
}

/** Saves a screenshot of `page` as test-artifacts/NAME.png (the whole page unless `fullPage: false`). */
export async function screenshot(
  page: { screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown> },
  name: string,
  { fullPage = true } = {},
): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage });
}

/** The text of every element matching `selector` whose content is cut (wider than its box). */
export function cutCells(page: Page, selector: string): Promise<string[]> {
  return page
    .locator(selector)
    .evaluateAll((cells) =>
      cells
        .filter((cell) => cell.scrollWidth > cell.clientWidth + 1)
        .map((cell) => `${cell.className}: ${cell.textContent ?? ""} (${cell.scrollWidth} px in ${cell.clientWidth})`),
    );
}

/** The class of every element matching `selector` that ends right of `width` px or is not displayed. */
export function offScreen(page: Page, selector: string, width: number): Promise<string[]> {
  return page.locator(selector).evaluateAll(
    (cells, limit) =>
      cells
        .filter((cell) => {
          const box = cell.getBoundingClientRect();
          return box.width === 0 || box.right > limit;
        })
        .map((cell) => cell.className),
    width,
  );
}
