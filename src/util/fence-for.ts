// Markdown fences that the text they hold cannot close.

/** A fence of `char` (three at least) longer than any run of `char` in `text`. */
export function fenceFor(text: string, char: "`" | "~"): string {
  let longest = 0;
  let current = 0;
  for (const ch of text) {
    current = ch === char ? current + 1 : 0;
    longest = Math.max(longest, current);
  }
  return char.repeat(Math.max(3, longest + 1));
}
