// The terminal screen as lines: each frame writes only the lines that changed since the last one, in one
// write wrapped in synchronized-output marks, so a screen redrawn ten times a second does not flicker.

/** Where the cursor shows (an input box), or null to hide it. */
export interface Cursor {
  row: number;
  col: number;
}

/** Sequences that enter the full-screen mode: alternate screen, no line wrap, cursor hidden, screen cleared. */
export const ENTER = "\x1b[?1049h\x1b[?7l\x1b[?25l\x1b[2J";
/** Sequences that undo ENTER: colours reset, cursor shown, line wrap back, the person's own screen back. */
export const LEAVE = "\x1b[0m\x1b[?25h\x1b[?7h\x1b[?1049l";

/** Draws frames of lines, each exactly as wide as the screen, to `write`. */
export class Screen {
  private shown: string[] = [];
  private cursorShown = false;

  /** `color` false (NO_COLOR): lines hold no SGR sequence, and none is added after them. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly color = true,
  ) {}

  /** Draws `lines` (row 0 first), writing only those that differ from the frame before. */
  draw(lines: string[], cursor: Cursor | null): void {
    let out = "";
    for (let row = 0; row < lines.length; row++) {
      const line = lines[row] as string;
      if (this.shown[row] !== line) out += `\x1b[${row + 1};1H${line}${this.color ? "\x1b[0m" : ""}`;
    }
    for (let row = lines.length; row < this.shown.length; row++) out += `\x1b[${row + 1};1H\x1b[2K`;
    if (cursor) out += `\x1b[${cursor.row + 1};${cursor.col + 1}H${this.cursorShown ? "" : "\x1b[?25h"}`;
    else if (this.cursorShown) out += "\x1b[?25l";
    this.cursorShown = cursor !== null;
    this.shown = lines;
    if (out !== "") this.write(`\x1b[?2026h${out}\x1b[?2026l`);
  }

  /** Forgets what is shown (after a resize): the next frame is drawn whole on a cleared screen. */
  invalidate(): void {
    this.shown = [];
    this.write("\x1b[2J");
  }
}
