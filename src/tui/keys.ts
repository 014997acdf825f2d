// The keys in what a terminal in raw mode sends: named keys for the escape sequences the screen uses, and
// every other character as itself (a paste arrives as many characters at once).

/** One key press: a name for special keys, else the character typed. */
export type Key =
  | "up"
  | "down"
  | "left"
  | "right"
  | "pageup"
  | "pagedown"
  | "home"
  | "end"
  | "enter"
  | "escape"
  | "backspace"
  | "tab"
  | "ctrl-c"
  | "ctrl-u"
  | { char: string };

const SEQUENCES: Record<string, Key> = {
  "\x1b[A": "up",
  "\x1b[B": "down",
  "\x1b[C": "right",
  "\x1b[D": "left",
  "\x1bOA": "up",
  "\x1bOB": "down",
  "\x1bOC": "right",
  "\x1bOD": "left",
  "\x1b[5~": "pageup",
  "\x1b[6~": "pagedown",
  "\x1b[H": "home",
  "\x1b[F": "end",
  "\x1bOH": "home",
  "\x1bOF": "end",
  "\x1b[1~": "home",
  "\x1b[4~": "end",
};

const SINGLE: Record<string, Key> = {
  "\r": "enter",
  "\n": "enter",
  "\x7f": "backspace",
  "\b": "backspace",
  "\t": "tab",
  "\x03": "ctrl-c",
  "\x15": "ctrl-u",
};

/** The keys in one chunk of terminal input. */
export function parseKeys(data: string): Key[] {
  const keys: Key[] = [];
  let at = 0;
  while (at < data.length) {
    const char = data[at] as string;
    if (char === "\x1b") {
      // A CSI or SS3 sequence: ESC [ or ESC O, parameters, one final byte.
      // eslint-disable-next-line no-control-regex -- matching the terminal's escape sequences is the point
      const csi = /^\x1b(?:\[[0-9;?]*[\x40-\x7e]|O[A-Z])/.exec(data.slice(at));
      if (csi) {
        const named = SEQUENCES[csi[0]];
        if (named) keys.push(named);
        at += csi[0].length;
        continue;
      }
      keys.push("escape");
      at += 1;
      continue;
    }
    const single = SINGLE[char];
    if (single) keys.push(single);
    else if (char >= " ") {
      const codePoint = data.codePointAt(at) ?? 0;
      const whole = String.fromCodePoint(codePoint);
      keys.push({ char: whole });
      at += whole.length;
      continue;
    }
    at += 1;
  }
  return keys;
}
