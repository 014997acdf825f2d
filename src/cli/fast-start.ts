#!/usr/bin/env node
// The built CLI's entry (scripts/bundle.mjs bundles it as dist/src/cli/main.js): the three calls that must
// start at Node's own speed — `--version`, `status` and the Stop hook's `hook handle` — are answered
// without loading the command tree; every other argv, and any doubt, goes to the full CLI (main.ts).
import "./no-inspector.js";
import { readFileSync } from "node:fs";
import { isContainerInit } from "../process/container-init.js";
import { quickStart } from "./quick-start.js";

async function full(): Promise<void> {
  await import("./main.js");
}

async function start(argv: string[]): Promise<void> {
  // PID 1 of a container runs under a reaper, which main.ts sets up.
  const quick = isContainerInit() ? ({ kind: "full" } as const) : quickStart(argv);
  switch (quick.kind) {
    case "version": {
      const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string };
      process.stdout.write(`${pkg.version}\n`);
      return;
    }
    case "hook-handle": {
      // Its one refusal (a terminal on stdin) is worded by the full CLI.
      if (process.stdin.isTTY) return full();
      const { hookHandleCommand } = await import("./commands/hook-handle.js");
      process.exitCode = await hookHandleCommand();
      return;
    }
    case "status": {
      const [{ statusCommand }, { findProject }] = await Promise.all([import("./commands/inspect.js"), import("./find-project.js")]);
      try {
        process.exitCode = await statusCommand(findProject(process.cwd()), quick.run, quick.json);
      } catch {
        // status only reads: the full CLI runs it again and words the failure as every command's.
        return full();
      }
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

await start(process.argv.slice(2));
