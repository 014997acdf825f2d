// Splits argument text into words with POSIX shell quoting rules, and quotes words for a shell.
//
// Only quoting is honoured: '…' is literal, "…" allows \" \\ \$ \` and line continuations, and a
// backslash outside quotes escapes the next character. Nothing else is special: no globbing, no
// variables, no command substitution, no operators, so `?a=1&b=2`, `*` and `$HOME` stay as typed.

/** Words, or why the text could not be split. */
export type WordsResult = { ok: true; words: string[] } | { ok: false; message: string };

const DOUBLE_QUOTE_ESCAPES = new Set(["$", "`", '"', "\\"]);

/** Splits `text` into words the way a POSIX shell would, without expanding anything. */
export function splitShellWords(text: string): WordsResult {
  const words: string[] = [];
  let current: string | null = null;
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      if (current !== null) words.push(current);
      current = null;
      i += 1;
    } else if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return unterminated("'", text, i);
      current = (current ?? "") + text.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      const quoted = readDoubleQuoted(text, i + 1);
      if (quoted === null) return unterminated('"', text, i);
      current = (current ?? "") + quoted.value;
      i = quoted.next;
    } else if (ch === "\\") {
      const next = text.charAt(i + 1);
      if (next === "\n")
        i += 2; // line continuation
      else if (next === "") {
        current = (current ?? "") + "\\";
        i += 1;
      } else {
        current = (current ?? "") + next;
        i += 2;
      }
    } else {
      current = (current ?? "") + ch;
      i += 1;
    }
  }
  if (current !== null) words.push(current);
  return { ok: true, words };
}

function readDoubleQuoted(text: string, start: number): { value: string; next: number } | null {
  let value = "";
  let i = start;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (ch === '"') return { value, next: i + 1 };
    if (ch === "\\" && i + 1 < text.length) {
      const next = text.charAt(i + 1);
      if (next === "\n") i += 2;
      else if (DOUBLE_QUOTE_ESCAPES.has(next)) {
        value += next;
        i += 2;
      } else {
        value += ch;
        i += 1;
      }
      continue;
    }
    value += ch;
    i += 1;
  }
  return null;
}

function unterminated(quote: string, text: string, at: number): WordsResult {
  const line = text.slice(0, at).split("\n").length;
  const context = text.slice(Math.max(0, at - 12), at + 13).replace(/\s+/g, " ");
  const hint =
    quote === "'"
      ? `close it, or write an apostrophe as \\' or inside "double quotes" (as in "don't")`
      : `close it, or write a literal double quote as \\"`;
  return { ok: false, message: `unterminated ${quote} quote on line ${line} near ${JSON.stringify(context)}: ${hint}` };
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** `word` quoted for bash, zsh and sh (single quotes; a `'` inside becomes '\''); safe words stay bare. */
export function quoteShellWord(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A command line of quoted words. */
export function shellCommandLine(words: readonly string[]): string {
  return words.map(quoteShellWord).join(" ");
}
