// The agent CLIs the tests run for real, each pinned with its lock file under test/clis/<name> and installed
// there by scripts/install-test-deps.mjs (run by `npm test`), never by a plain `npm install` of ralph.
import { fileURLToPath } from "node:url";

/** The pinned CLI `bin` of test/clis/`name` (run `node scripts/install-test-deps.mjs` when it is missing). */
export function pinnedCli(name: string, bin = name): string {
  return fileURLToPath(new URL(`../../../test/clis/${name}/node_modules/.bin/${bin}`, import.meta.url));
}
