// The terminal UI's screen: a frame writes only the lines that changed, in one write between
// synchronized-output marks; nothing when nothing changed; everything again after a resize.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Screen } from "../../src/tui/screen.js";

function screen(color = false): { screen: Screen; writes: string[] } {
  const writes: string[] = [];
  return { screen: new Screen((text) => writes.push(text), color), writes };
}

test("the first frame draws every line; the next only the line that changed", () => {
  const { screen: shown, writes } = screen();
  shown.draw(["title", "row one", "row two", "keys"], null);
  assert.deepEqual(writes, ["\x1b[?2026h\x1b[1;1Htitle\x1b[2;1Hrow one\x1b[3;1Hrow two\x1b[4;1Hkeys\x1b[?2026l"]);
  shown.draw(["title", "row one", "row 2", "keys"], null);
  assert.equal(writes[1], "\x1b[?2026h\x1b[3;1Hrow 2\x1b[?2026l");
  shown.draw(["title", "row one", "row 2", "keys"], null);
  assert.equal(writes.length, 2, "an unchanged frame writes nothing");
});

test("a shorter frame clears the rows it no longer has; the cursor shows only for an input box", () => {
  const { screen: shown, writes } = screen();
  shown.draw(["a", "b", "c"], null);
  shown.draw(["a", "b"], { row: 1, col: 4 });
  assert.equal(writes[1], "\x1b[?2026h\x1b[3;1H\x1b[2K\x1b[2;5H\x1b[?25h\x1b[?2026l");
  shown.draw(["a", "b"], null);
  assert.equal(writes[2], "\x1b[?2026h\x1b[?25l\x1b[?2026l");
});

test("after a resize the screen is cleared and the next frame drawn whole", () => {
  const { screen: shown, writes } = screen();
  shown.draw(["a", "b"], null);
  shown.invalidate();
  shown.draw(["a", "b"], null);
  assert.deepEqual(writes.slice(1), ["\x1b[2J", "\x1b[?2026h\x1b[1;1Ha\x1b[2;1Hb\x1b[?2026l"]);
});

test("with colour each written line ends with a reset; without (NO_COLOR) no SGR is written", () => {
  const colored = screen(true);
  colored.screen.draw(["x"], null);
  assert.equal(colored.writes[0], "\x1b[?2026h\x1b[1;1Hx\x1b[0m\x1b[?2026l");
  const plain = screen(false);
  plain.screen.draw(["x"], null);
  assert.doesNotMatch(plain.writes[0] ?? "", /m/);
});
