// Debian's chromium driven by playwright-core, with a fresh profile: for the browser tests and the benchmark.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** The browser the tests drive: Debian's chromium package. */
export const CHROMIUM = "/usr/bin/chromium";

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

/** A fresh headless chromium profile; closing it removes the profile. */
export async function openBrowser(
  extraFlags: string[] = [],
): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "ralph-chromium-"));
  // launchPersistentContext is how playwright takes a --user-data-dir of our own.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...FLAGS, ...extraFlags],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
