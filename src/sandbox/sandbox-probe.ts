// Whether bubblewrap can build a sandbox on this machine, and if not, why (for `ralph run` and `ralph doctor`).
import { spawnSync } from "node:child_process";
import { findOnPath } from "../process/supervision.js";
import { SANDBOX_BASE_OPTIONS } from "./bwrap-argv.js";

/** The programs a sandbox needs, or why it cannot be had here. */
export type SandboxProbe = { ok: true; bwrap: string; perl: string; version: string } | { ok: false; why: string };

/** Where to get bubblewrap, said once. */
export const BWRAP_PACKAGE =
  "install the bubblewrap package (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)";

/** Looks for bwrap and perl on PATH and starts one empty sandbox with the namespaces ralph uses. */
export function probeSandbox(env: NodeJS.ProcessEnv): SandboxProbe {
  if (process.platform !== "linux")
    return {
      ok: false,
      why: `the sandbox is built with bubblewrap on Linux; ${process.platform} is not supported yet`,
    };
  const bwrap = findOnPath("bwrap", env.PATH ?? "");
  if (bwrap === null) return { ok: false, why: `bwrap (bubblewrap) not found on PATH: ${BWRAP_PACKAGE}` };
  const perl = findOnPath("perl", env.PATH ?? "");
  if (perl === null)
    return { ok: false, why: "perl not found on PATH: the sandbox's launcher is a small Perl program (install perl)" };
  const tried = spawnSync(bwrap, [...SANDBOX_BASE_OPTIONS, "--", "/bin/sh", "-c", "exit 0"], {
    encoding: "utf8",
    timeout: 10_000,
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (tried.error) return { ok: false, why: `bwrap could not be started: ${tried.error.message}` };
  if (tried.status !== 0) {
    const said = (tried.stderr ?? "").trim().split("\n")[0] ?? "";
    const userns = /user namespace|uid map|Operation not permitted|setting up uid|No space left/i.test(said);
    // As root too: without a user namespace the agent would keep root's capabilities, so no weaker sandbox is built.
    const hint = !userns
      ? ""
      : process.getuid?.() === 0
        ? " (the kernel gives no user namespace here, and without one the agent would hold root's capabilities: allow user namespaces, e.g. sysctl user.max_user_namespaces=10000, or in a container run it with a seccomp profile that allows them)"
        : " (unprivileged user namespaces are refused here: allow them, e.g. sysctl kernel.unprivileged_userns_clone=1 or an AppArmor profile for bwrap, or run where they are allowed)";
    return {
      ok: false,
      why: `bwrap cannot create a sandbox here: ${said || `exit ${tried.status ?? tried.signal}`}${hint}`,
    };
  }
  const version = spawnSync(bwrap, ["--version"], { encoding: "utf8", timeout: 5_000 }).stdout?.trim() ?? "bubblewrap";
  return { ok: true, bwrap, perl, version };
}
