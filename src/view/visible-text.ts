// Text from the agent, made safe for a terminal: control characters and escape sequences shown, not obeyed.

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates that
// reorder what a person reads. ESC and BEL are what OSC 52 (set the clipboard) and screen clears are made of.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

function escaped(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/**
 * `text` with every control character written out visibly (ESC as `\x1b`, BEL as `\x07`, CR as `\x0d`), so
 * an agent's output, question, task title or reason cannot move the cursor, clear the screen, set the
 * clipboard or recolour ralph's lines. Newlines and tabs stay. ralph's own colours are added after this.
 */
export function visible(text: string): string {
  return text.replace(CONTROLS, escaped);
}

/** `text` on one line: `visible`, with newlines and tabs written out too (a path in a log line cannot start another). */
export function visibleLine(text: string): string {
  return visible(text).replace(/[\t\n]/g, escaped);
}
