// visible(): control characters from the agent written out, everything else as it was.
import { test } from "node:test";
import assert from "node:assert/strict";
import { visible } from "../../src/view/visible-text.js";

test("ESC, BEL, CR, C1 controls and bidi overrides are written out; newlines, tabs and other text stay", () => {
  assert.equal(
    visible("Pick \x1b]52;c;cm0gLXJmIH4K\x07 one \x1b[2J"),
    "Pick \\x1b]52;c;cm0gLXJmIH4K\\x07 one \\x1b[2J",
  );
  assert.equal(visible("done\rFAKE"), "done\\x0dFAKE");
  assert.equal(visible("\x9b31m csi \x00 nul \x7f del"), "\\x9b31m csi \\x00 nul \\x7f del");
  assert.equal(visible("abc\u202Efdp.exe"), "abc\\u{202e}fdp.exe");
  assert.equal(visible("line 1\n\tline 2 · ✓ ünïcödé 😀"), "line 1\n\tline 2 · ✓ ünïcödé 😀");
});
