// The directory a reviewer starts in when its CLI reads settings from its directory upward: the user's home,
// whose settings are the user's own, never a directory of the work tree another agent wrote.
import { homedir } from "node:os";
import { isAbsolute, relative, resolve } from "node:path";

/** The user's HOME (from `env`, else the account's), refused when it is missing, relative or in `workDir`. */
export function userHomeOutside(workDir: string, env: NodeJS.ProcessEnv): string {
  const home = env.HOME && env.HOME !== "" ? env.HOME : homedir();
  if (!home || !isAbsolute(home))
    throw new Error(
      "HOME is not an absolute directory: the reviewer starts there so that it takes no settings from the work tree",
    );
  const inside = relative(resolve(workDir), resolve(home));
  if (inside === "" || (!inside.startsWith("..") && !isAbsolute(inside))) {
    throw new Error(
      `HOME (${home}) is in the work tree: the reviewer would take its settings from files the agent can write`,
    );
  }
  return home;
}
