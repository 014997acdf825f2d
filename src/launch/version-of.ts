// An agent CLI's version as `ralph doctor` shows it: `<bin> --version`, run without a shell.
import { execFile } from "node:child_process";

/** `<bin> --version`, first line, within 15 s. */
export function versionOf(path: string): Promise<{ version: string | null; error: string | null }> {
  return new Promise((resolve) => {
    execFile(path, ["--version"], { timeout: 15_000, encoding: "utf8" }, (error, stdout) => {
      const first = stdout.trim().split("\n")[0]?.trim() ?? "";
      if (first !== "") resolve({ version: first, error: null });
      else resolve({ version: null, error: error ? (error.message.split("\n")[0] ?? "failed") : "printed nothing" });
    });
  });
}
