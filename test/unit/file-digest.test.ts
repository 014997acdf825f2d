// What ralph pins and records is hashed through the bounded regular-file reader: a FIFO the agent puts where a
// pinned script or a run's settings.json was must give "not that file" at once, never block the runner.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fileDigest } from "../../src/store/file-digest.js";
import { pinBroken, pinProgram } from "../../src/store/pinned-program.js";

const root = mkdtempSync(join(tmpdir(), "ralph-file-digest-"));
after(() => rmSync(root, { recursive: true, force: true }));
const ledger = fileURLToPath(new URL("../../src/control/run-ledger.js", import.meta.url));

/** Runs `fileDigest` of run-ledger.js on `file` in a child bounded to 10 s (a blocking read would hang this process). */
function digestInChild(file: string): { status: number | null; stdout: string; timedOut: boolean } {
  const script = `import(${JSON.stringify(ledger)}).then((m) => process.stdout.write(String(m.fileDigest(${JSON.stringify(file)}))))`;
  const result = spawnSync(process.execPath, ["-e", script], {
    encoding: "utf8",
    timeout: 10_000,
    killSignal: "SIGKILL",
  });
  return { status: result.status, stdout: result.stdout, timedOut: result.signal === "SIGKILL" };
}

test("a FIFO in place of settings.json: the runner's digest is null at once (it blocked for good before)", () => {
  const fifo = join(root, "settings.json");
  assert.equal(spawnSync("mkfifo", [fifo]).status, 0);
  const child = digestInChild(fifo);
  assert.equal(child.timedOut, false, "fileDigest blocked on a FIFO");
  assert.equal(child.stdout, "null");
});

test("control: a regular file is hashed, in the child as here", () => {
  const file = join(root, "plain.json");
  writeFileSync(file, "abc");
  const child = digestInChild(file);
  assert.equal(child.stdout, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(fileDigest(file), child.stdout);
});

test("a pinned script replaced by a FIFO or a link is not run: changed or gone, never a wait", () => {
  const script = join(root, "notify.sh");
  writeFileSync(script, "echo hi\n");
  const pin = pinProgram(["./notify.sh"], root, root);
  assert.notEqual(pin, null);
  assert.equal(pinBroken(pin), null);
  rmSync(script);
  assert.equal(spawnSync("mkfifo", [script]).status, 0);
  assert.match(pinBroken(pin) ?? "", /is gone since the run started$/);
  rmSync(script);
  writeFileSync(join(root, "elsewhere.sh"), "echo hi\n");
  symlinkSync(join(root, "elsewhere.sh"), script);
  assert.match(pinBroken(pin) ?? "", /is gone since the run started$/);
});
