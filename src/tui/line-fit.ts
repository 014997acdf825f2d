// One screen line from styled pieces: the agent's text made visible (control characters shown, never obeyed),
// cut or padded to the screen's width in terminal cells, and styled with SGR codes unless colour is off.
import stringWidth from "string-width";
import type { Tone } from "../view/render-lines.js";
import { visible } from "../view/visible-text.js";

/** How a piece of a line is shown: a tone of the shared run lines, or one of the screen's own. */
export type Style = Tone | "select" | "off" | "title";

/** A styled piece of a line. */
export interface Span {
  style: Style;
  text: string;
}

/** A piece of a line. */
export const span = (style: Style, text: string): Span => ({ style, text });

const SGR: Record<Style, string> = {
  plain: "",
  bold: "1",
  tool: "36",
  dim: "2",
  warn: "33",
  error: "31",
  done: "32",
  select: "7",
  off: "2;9",
  title: "1;7",
};

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Characters one cell wide that lines often hold (Latin-1, punctuation, arrows, box drawing, shapes). */
const NARROW = /^[\u00a0-\u02ff\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2500-\u25ff]$/;
const widths = new Map<string, number>();

/** The cells one grapheme takes, remembered (a screen shows the same few again and again). */
function graphemeWidth(grapheme: string): number {
  if (grapheme.length === 1 && (PRINTABLE_ASCII.test(grapheme) || NARROW.test(grapheme))) return 1;
  let width = widths.get(grapheme);
  if (width === undefined) {
    width = stringWidth(grapheme);
    if (widths.size < 10_000) widths.set(grapheme, width);
  }
  return width;
}

/** The cells `text` takes on a terminal. */
export function cellWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let cells = 0;
  for (const { segment } of graphemes.segment(text)) cells += graphemeWidth(segment);
  return cells;
}

/** `text` cut to at most `width` cells (by whole characters); the cells it takes. */
function cut(text: string, width: number): { text: string; cells: number } {
  if (PRINTABLE_ASCII.test(text))
    return text.length <= width ? { text, cells: text.length } : { text: text.slice(0, width), cells: width };
  let out = "";
  let cells = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = graphemeWidth(segment);
    if (cells + w > width) break;
    out += segment;
    cells += w;
  }
  return { text: out, cells };
}

/** A piece's text as the screen may show it: control characters written out, tabs and newlines as spaces. */
export function screenText(text: string): string {
  return visible(text).replace(/[\t\n]/g, " ");
}

/**
 * `spans` as exactly `width` cells: cut at the edge (its last cell an ellipsis when cut), padded with spaces.
 * With `color` false (NO_COLOR) no escape sequence is written at all.
 */
export function fitLine(spans: Span[], width: number, color: boolean, fill: Style = "plain"): string {
  let out = "";
  let cells = 0;
  for (const piece of spans) {
    if (cells >= width) break;
    const text = screenText(piece.text);
    const room = width - cells;
    const fitted = cut(text, room);
    if (fitted.text.length < text.length) {
      // Leave a cell for the ellipsis that says the line goes on.
      const shorter = cut(text, Math.max(0, room - 1));
      out += paint(`${shorter.text}…`, piece.style, color);
      cells += shorter.cells + 1;
      break;
    }
    out += paint(fitted.text, piece.style, color);
    cells += fitted.cells;
  }
  if (cells < width) out += paint(" ".repeat(width - cells), fill, color);
  return out;
}

function paint(text: string, style: Style, color: boolean): string {
  const code = SGR[style];
  return !color || code === "" || text === "" ? text : `\x1b[${code}m${text}\x1b[0m`;
}
