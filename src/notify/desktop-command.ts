// The command that shows a desktop notification here: notify-send on Linux and BSD, osascript on macOS.
import { findOnPath } from "../process/supervision.js";

/** argv showing one notification, or why this machine cannot show one. */
export type DesktopCommand = { ok: true; argv: string[] } | { ok: false; message: string };

// The text arrives as arguments of the script's run handler, never spliced into the script itself.
const APPLESCRIPT = "on run argv\ndisplay notification (item 2 of argv) with title (item 1 of argv)\nend run";

/** The notification command for `platform`, found on the `PATH` of `env`. */
export function desktopCommand(
  title: string,
  body: string,
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
): DesktopCommand {
  const program = platform === "darwin" ? "osascript" : platform === "win32" ? null : "notify-send";
  if (program === null) return { ok: false, message: `desktop notifications are not supported on ${platform}` };
  const found = findOnPath(program, env.PATH ?? "");
  if (found === null) return { ok: false, message: `desktop notifications need ${program}, which is not on PATH` };
  if (program === "osascript") return { ok: true, argv: [found, "-e", APPLESCRIPT, title, body] };
  return { ok: true, argv: [found, "--app-name=ralph", "--", title, body] };
}
