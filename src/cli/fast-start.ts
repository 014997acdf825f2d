#!/usr/bin/env node
// The built CLI's entry, run as CommonJS (scripts/bundle.mjs bundles it as dist/src/cli/main.cjs): Node sets
// up its ES module loader only for the first `import`, a cost of its own. The calls that must start at
// Node's own speed — `--version`, `status`, `list` and the Stop hook's `hook handle` — are answered from
// CommonJS files without loading the command tree; every other argv, and any doubt, goes to the full CLI (main.ts),
// one CommonJS file too (full.cjs), run from its code cache.
import "./no-inspector.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { stdinIsTerminal } from "../hook/read-stdin.js";
import { isContainerInit } from "../process/container-init.js";
import { requireCached } from "./cached-require.js";
import { quickStart } from "./quick-start.js";
import { writeOut } from "./write-out.js";
import { keepYoungGenerationSmall } from "./young-generation.js";

/** One of the CLI's CommonJS files, loaded through its code cache (see cached-require.ts). */
function cachedFile(name: "quick-hook" | "quick-status" | "full"): unknown {
  return requireCached(fileURLToPath(new URL(`./${name}.cjs`, import.meta.url)), require);
}

/** The full CLI (main.ts), which runs at its load. */
function full(): void {
  // The flag main.ts sets first, set before the file is compiled: its cache was made under it (after a
  // real run), and V8 takes a cache only under the flags it was made with.
  keepYoungGenerationSmall();
  cachedFile("full");
}

async function start(argv: string[]): Promise<void> {
  // PID 1 of a container runs under a reaper, which main.ts sets up.
  const quick = isContainerInit() ? ({ kind: "full" } as const) : quickStart(argv);
  switch (quick.kind) {
    case "version": {
      const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
        version: string;
      };
      writeOut(`${pkg.version}\n`);
      return;
    }
    case "hook-handle": {
      // Its one refusal (a terminal on stdin) is worded by the full CLI.
      if (stdinIsTerminal()) return full();
      const { quickHook } = cachedFile("quick-hook") as typeof import("./quick-hook.js");
      // The file runs from its code cache, where import() is not available: the loop's entry comes from here.
      process.exitCode = await quickHook(undefined, () => import("../hook/handle-stop.js"));
      return;
    }
    case "status": {
      const { quickStatus } = cachedFile("quick-status") as typeof import("./quick-status.js");
      const code = await quickStatus(quick.run, quick.json);
      // status only reads: on a failure the full CLI runs it again and words it as every command's.
      if (code === null) return full();
      process.exitCode = code;
      return;
    }
    case "list": {
      const { quickList } = cachedFile("quick-status") as typeof import("./quick-status.js");
      const code = await quickList(quick.active, quick.json);
      if (code === null) return full();
      process.exitCode = code;
      return;
    }
    case "full":
      return full();
    default: {
      const unreachable: never = quick;
      throw new Error(`unknown start ${JSON.stringify(unreachable)}`);
    }
  }
}

/** `error` as main.ts says every failure (cli/failure-exit.ts), loaded only now so that the quick paths compile none of it. */
function said(error: unknown): { code: number; line: string } {
  try {
    const { sayFailure } = cachedFile("quick-status") as typeof import("./quick-status.js");
    return sayFailure(error, false);
  } catch {
    // The file that words failures could not be loaded (it may be what failed): the message alone.
    return { code: 1, line: `internal error: ${(error as Error | null)?.message ?? String(error)}` };
  }
}

// An error none of the paths words.
start(process.argv.slice(2)).catch((error: unknown) => {
  const { code, line } = said(error);
  process.stderr.write(`ralph: ${line}\n`);
  process.exitCode = code;
});
