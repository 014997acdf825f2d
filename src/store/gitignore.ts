// Adds entries to a project's .gitignore, once each, without touching the lines already there.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Appends each entry not yet ignored (as itself or without its trailing slash); returns those added. */
export function ensureIgnored(projectDir: string, entries: readonly string[]): string[] {
  const file = join(projectDir, ".gitignore");
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  const lines = new Set(current.split(/\r?\n/).map((line) => line.trim()));
  const missing = entries.filter((entry) => !lines.has(entry) && !lines.has(entry.replace(/\/$/, "")));
  if (missing.length > 0)
    appendFileSync(file, `${current === "" || current.endsWith("\n") ? "" : "\n"}${missing.join("\n")}\n`, {
      mode: 0o644,
    });
  return missing;
}
