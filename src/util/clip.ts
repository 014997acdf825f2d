// Shortening text for one line of output.

/** The text cut to at most `limit` characters, ending in "…" when cut. */
export function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
