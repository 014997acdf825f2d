// Decides whether an agent's final message claims completion with `<promise>TEXT</promise>`.
//
// A tag whose text matches (whitespace-normalised, case-sensitive) counts only when it is a
// claim. It does not count when it is:
//   1. part of the prompt echoed back: the whole prompt repeated, or the tag together with at
//      least ECHO_CONTEXT characters of the prompt text around it;
//   2. inside Markdown code (a fenced block or a backtick span);
//   3. inside quotes ("…", '…', “…”, ‘…’, «…») on its line, or on a `>` block-quote line;
//   4. negated ("I will not output …", "I can't say …", "not yet …", "… would be premature"), or
//      a statement of intent or a condition rather than a claim. Rule: a statement of future
//      intent ("once finished I will print <promise>DONE</promise>", "I'll output … when tests
//      pass", "if all tests pass, …") says the work is NOT done yet, so it is not a claim.
//      A modal with "now" ("I will now output …") is the act of claiming itself, so it counts.
// These rules err toward "not a claim": a missed claim costs one more iteration, a false one
// ends the run with the work unfinished. The caller passes only the final message, so
// earlier messages in the iteration are never looked at.

/** Why a final message does or does not complete the loop. */
export interface ClaimVerdict {
  found: boolean;
  reason: "found" | "absent" | "echoed_prompt" | "quoted" | "code" | "negated" | "bare_phrase";
  /** A short human explanation of the reason (e.g. which rule rejected the tag). */
  detail?: string;
}

// The content may not hold another opening tag: a stray "<promise>" earlier does not swallow the real one.
const TAG = /<promise>((?:(?!<promise>)[\s\S])*?)<\/promise>/g;
/** How many characters of the prompt around a tag make it an echo of the prompt. */
const ECHO_CONTEXT = 16;
const MAX_TAGS_JUDGED = 100;

/** Collapses every run of whitespace to one space and trims both ends. */
export function normaliseWhitespace(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Looks for the completion promise in the agent's final message; `prompt` is the prompt it was given. */
export function findClaim(finalMessage: string, promise: string, prompt?: string): ClaimVerdict {
  const expected = normaliseWhitespace(promise);
  if (expected === "") return { found: false, reason: "absent", detail: "no promise text to look for" };
  const message = normaliseNewlines(finalMessage);
  const judge = tagJudge(message, prompt);
  const matches = [...message.matchAll(TAG)].filter((match) => normaliseWhitespace(match[1] ?? "") === expected);
  let last: ClaimVerdict | null = null;
  // A claim is made near the end; judging only the last tags bounds the work on pathological messages.
  for (const match of matches.slice(-MAX_TAGS_JUDGED)) {
    const start = match.index;
    const verdict = judge(start, start + match[0].length);
    if (verdict.found) return verdict;
    last = verdict;
  }
  if (last) return last;
  if (normaliseWhitespace(message).includes(expected)) {
    return { found: false, reason: "bare_phrase", detail: "the promise text appears without the <promise> tag" };
  }
  return { found: false, reason: "absent", detail: "no <promise> tag with the expected text" };
}

/** CRLF and CR line ends as LF, so that line-based rules see one kind. */
export function normaliseNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/**
 * The judge of tags in one message (newlines normalised): whether the tag at [start, end) is a claim, by
 * every rule above. The message's code spans and the echo check are worked out once, for every tag.
 */
export function tagJudge(message: string, prompt?: string): (start: number, end: number) => ClaimVerdict {
  const isEcho = echoChecker(message, prompt);
  const code = codeMask(message);
  return (start, end) => judgeTag(message, start, end, isEcho, code);
}

function judgeTag(
  message: string,
  start: number,
  end: number,
  isEcho: (start: number, end: number) => boolean,
  code: Uint8Array,
): ClaimVerdict {
  if (isEcho(start, end))
    return { found: false, reason: "echoed_prompt", detail: "the tag is part of the prompt echoed back" };
  if (code[start] === 1) return { found: false, reason: "code", detail: "the tag is inside Markdown code" };
  const lineStart = message.lastIndexOf("\n", start - 1) + 1;
  const newline = message.indexOf("\n", end);
  const before = message.slice(lineStart, start);
  const after = message.slice(end, newline < 0 ? message.length : newline);
  if (isQuoted(before, after)) return { found: false, reason: "quoted", detail: "the tag is inside quotes" };
  const negation = negationOf(before, after);
  if (negation) return { found: false, reason: "negated", detail: negation };
  return { found: true, reason: "found", detail: "the final message claims completion" };
}

// ---- echoes of the prompt ----

function echoChecker(message: string, prompt: string | undefined): (start: number, end: number) => boolean {
  const wanted = normaliseWhitespace(prompt ?? "");
  if (wanted === "") return () => false;
  const { text, map } = normaliseWithMap(message);
  const wholeEchoes: Array<[number, number]> = [];
  for (let at = text.indexOf(wanted); at >= 0; at = text.indexOf(wanted, at + 1)) {
    wholeEchoes.push([at, at + wanted.length]);
  }
  return (start, end) => {
    const from = map[start] ?? 0;
    const to = (map[end - 1] ?? 0) + 1;
    if (!wanted.includes(text.slice(from, to))) return false;
    // A prompt that is nothing but the tag itself would otherwise make every claim an echo.
    if (wholeEchoes.some(([a, b]) => a <= from && to <= b && b - a > to - from)) return true;
    for (let left = 0; left <= ECHO_CONTEXT; left++) {
      const a = from - left;
      const b = to + ECHO_CONTEXT - left;
      if (a >= 0 && b <= text.length && wanted.includes(text.slice(a, b))) return true;
    }
    return false;
  };
}

/** normaliseWhitespace, plus where each input character ended up in the output. */
function normaliseWithMap(input: string): { text: string; map: number[] } {
  const map = new Array<number>(input.length);
  const parts: string[] = [];
  let length = 0;
  let pendingSpace = false;
  for (let i = 0; i < input.length; i++) {
    const ch = input.charAt(i);
    if (/\s/.test(ch)) {
      pendingSpace = length > 0;
      map[i] = length;
      continue;
    }
    if (pendingSpace) {
      parts.push(" ");
      length += 1;
      pendingSpace = false;
    }
    map[i] = length;
    parts.push(ch);
    length += 1;
  }
  return { text: parts.join(""), map };
}

// ---- Markdown code ----

/** Marks every character that is inside a fenced code block or an inline code span. */
function codeMask(text: string): Uint8Array {
  const mask = new Uint8Array(text.length);
  let fence: { char: string; length: number } | null = null;
  let proseStart = 0;
  let pos = 0;
  for (const line of text.split("\n")) {
    const lineEnd = Math.min(pos + line.length + 1, text.length);
    if (fence) {
      mask.fill(1, pos, lineEnd);
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close?.[1] && close[1][0] === fence.char && close[1].length >= fence.length) {
        fence = null;
        proseStart = lineEnd;
      }
    } else {
      const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
      // A backtick "fence" whose info string holds a backtick is an inline span instead.
      if (open?.[1] && !(open[1][0] === "`" && (open[2] ?? "").includes("`"))) {
        markInlineCode(text, proseStart, pos, mask);
        fence = { char: open[1][0] ?? "`", length: open[1].length };
        mask.fill(1, pos, lineEnd);
      }
    }
    pos = lineEnd;
  }
  if (!fence) markInlineCode(text, proseStart, text.length, mask);
  return mask;
}

function markInlineCode(text: string, from: number, to: number, mask: Uint8Array): void {
  const segment = text.slice(from, to);
  const opener = /`+/g;
  for (let open = opener.exec(segment); open; open = opener.exec(segment)) {
    const ticks = open[0].length;
    const closer = new RegExp(`(?<!\`)\`{${ticks}}(?!\`)`, "g");
    closer.lastIndex = open.index + ticks;
    const close = closer.exec(segment);
    if (!close) continue; // an unmatched run of backticks is literal text
    mask.fill(1, from + open.index, from + close.index + ticks);
    opener.lastIndex = close.index + ticks;
  }
}

// ---- quotes ----

const WORD_CHAR = /[\p{L}\p{N}]/u;

function isQuoted(before: string, after: string): boolean {
  if (/^ {0,3}>/.test(before)) return true;
  if ((before.split('"').length - 1) % 2 === 1 && after.includes('"')) return true;
  if (before.lastIndexOf("“") > before.lastIndexOf("”") && after.includes("”")) return true;
  if (before.lastIndexOf("«") > before.lastIndexOf("»") && after.includes("»")) return true;
  return opensSingleQuote(before) && closesSingleQuote(after);
}

// Apostrophes ("don't", "tests'") are told apart from quotes by the letters around them.
function opensSingleQuote(before: string): boolean {
  for (let i = before.length - 1; i >= 0; i--) {
    const ch = before.charAt(i);
    if (ch !== "'" && ch !== "‘" && ch !== "’") continue;
    const prevIsWord = WORD_CHAR.test(before.charAt(i - 1));
    const nextIsWord = WORD_CHAR.test(before.charAt(i + 1));
    if (ch !== "’" && !prevIsWord) return true;
    if (ch !== "‘" && !nextIsWord) return false;
  }
  return false;
}

function closesSingleQuote(after: string): boolean {
  for (let i = 0; i < after.length; i++) {
    const ch = after.charAt(i);
    if (ch !== "'" && ch !== "‘" && ch !== "’") continue;
    const prevIsWord = i > 0 && WORD_CHAR.test(after.charAt(i - 1));
    const nextIsWord = WORD_CHAR.test(after.charAt(i + 1));
    if (ch !== "‘" && !nextIsWord) return true;
    if (ch !== "’" && !prevIsWord) return false;
  }
  return false;
}

// ---- negation and intent ----

const NEGATION = /\b(?:not|never|cannot|unable|refuse|refrain|premature(?:ly)?|yet to)\b|n't\b/;
const NOT_DONE = /\bnot (?:yet|done|finished|complete|completed|ready)\b/;
const NEGATION_AFTER =
  /\b(?:not yet|prematur\w*|would be (?:false|untrue|a lie|dishonest|wrong))\b|^[^\p{L}]*(?:(?:is|are|was|would|will|should)\s*)?(?:not|n't)\b/u;
const FUTURE = /\b(?:will|shall|going to|gonna|about to|plan to|intend to|would|should|must|need to|have to)\b|'ll\b/;
const CONDITION = /\b(?:if|unless|once(?! (?:again|more))|until|till|as soon as|whenever|when|after|before)\b/;
const LEADING_CONDITION = /^[^\p{L}]*(?:if|unless|until|as soon as)\b/u;
const CONDITION_AFTER = /^[^\p{L}]*(?:if|unless|once|until|as soon as|when(?:ever)?|after|before)\b/u;
const PERFORMATIVE = /\b(?:now|hereby|here is|here's)\b/;

/** Why the prose around a tag makes it something other than a claim, or null when it is a claim. */
function negationOf(beforeOnLine: string, afterOnLine: string): string | null {
  const line = simplify(beforeOnLine);
  const clause = line.split(/(?<=[.!?;])\s+/).pop() ?? "";
  const next = simplify(afterOnLine).split(/[.!?;](?:\s|$)/)[0] ?? "";
  if (NEGATION.test(clause) || NOT_DONE.test(line) || NEGATION_AFTER.test(next)) {
    return "the tag is negated in the surrounding sentence";
  }
  const future = FUTURE.test(clause);
  const condition = CONDITION.test(clause);
  if (
    LEADING_CONDITION.test(clause) ||
    CONDITION_AFTER.test(next) ||
    (future && (condition || !PERFORMATIVE.test(clause)))
  ) {
    return "the tag is a statement of intent or a condition, not a claim that the work is done";
  }
  return null;
}

function simplify(text: string): string {
  return text.toLowerCase().replace(/[’‘]/g, "'");
}
