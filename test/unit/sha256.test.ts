// The plain-JavaScript SHA-256 that names a run's ledger record: it must be Node's, byte for byte, or every
// run recorded by another build of ralph would look foreign to `ralph status`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../src/util/sha256.js";

const nodeSha = (text: string): string => createHash("sha256").update(text).digest("hex");

test("sha256Hex is node:crypto's sha256 for every length around the block edges, multi-byte text included", () => {
  assert.equal(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  for (let length = 0; length <= 200; length++) {
    for (const unit of ["a", "é", "✓", "😀", "\u0000"]) {
      const text = unit.repeat(length);
      assert.equal(sha256Hex(text), nodeSha(text), `${JSON.stringify(unit)} × ${length}`);
    }
  }
  const path = "/home/someone/projects/a project/.ralph/runs/20261201-120000-ab12";
  assert.equal(sha256Hex(path), nodeSha(path));
});
