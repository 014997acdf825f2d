// Splits and joins Markdown files made of YAML front matter and a body kept byte for byte.
import { parse, stringify } from "yaml";

/** A front-matter document: the YAML fields and the untouched body. */
export interface FrontMatterDoc {
  fields: Record<string, unknown>;
  body: string;
}

const OPENING = /^---\r?\n/;
const CLOSING = /^---[ \t]*\r?$/m;

/** Parses `---\nYAML\n---\nBODY`; the body is returned exactly as written. */
export function parseFrontMatter(text: string): { ok: true; doc: FrontMatterDoc } | { ok: false; message: string } {
  const opening = OPENING.exec(text);
  if (!opening) return { ok: false, message: "does not start with a '---' front matter line" };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) return { ok: false, message: "has no closing '---' front matter line" };
  const yamlText = rest.slice(0, closing.index);
  let afterClosing = rest.slice(closing.index + closing[0].length);
  if (afterClosing.startsWith("\n")) afterClosing = afterClosing.slice(1);
  let fields: unknown;
  try {
    fields = yamlText.trim() === "" ? {} : parse(yamlText);
  } catch (error) {
    return { ok: false, message: `has invalid YAML front matter (${(error as Error).message.split("\n")[0]})` };
  }
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) {
    return { ok: false, message: "has front matter that is not a mapping of fields" };
  }
  return { ok: true, doc: { fields: fields as Record<string, unknown>, body: afterClosing } };
}

/** Renders front matter and body so that parseFrontMatter gives both back unchanged. */
export function renderFrontMatter(doc: FrontMatterDoc): string {
  return `---\n${stringify(doc.fields, { lineWidth: 0 })}---\n${doc.body}`;
}
