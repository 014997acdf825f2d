// Runs the GitHub CLI for `ralph land --pr`: an argv array and the body on stdin, never a shell string. gh
// runs in an empty directory of its own, never in the person's checkout: there it would read the repository's
// config, which an agent may have written (a remote pointing elsewhere, a program git runs), and pick the
// repository from it. The repository is named instead, from the URL the branch was pushed to.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** `[HOST/]OWNER/REPO` for gh's --repo from a remote URL (https, ssh or scp-like), or null for any other. */
export function ghRepoOf(url: string): string | null {
  const scp = /^[\w.-]+@([\w.-]+):([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url);
  const full = /^(?:https?|ssh|git):\/\/(?:[^@/]+@)?([\w.-]+)(?::\d+)?\/([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url);
  const found = scp ?? full;
  if (!found) return null;
  const [, host, owner, repo] = found;
  return host === "github.com" ? `${owner}/${repo}` : `${host}/${owner}/${repo}`;
}

/** Runs gh with `args` (plus `--repo` named from `url` when it names one), `body` on its stdin; resolves with its exit code and output. */
export function runGh(
  gh: string,
  args: string[],
  body: string,
  url: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const repo = ghRepoOf(url);
  const cwd = mkdtempSync(join(tmpdir(), "ralph-gh-"));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(gh, repo ? [...args, "--repo", repo] : args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.on("error", () => undefined);
    child.stdin.end(body);
  }).finally(() => rmSync(cwd, { recursive: true, force: true }));
}
