import { test } from "node:test";
import assert from "node:assert/strict";
import { findClaim, normaliseWhitespace, type ClaimVerdict } from "../../src/judge/claim.js";

const PROMPT = [
  "Fix the failing tests under src/.",
  "When every test passes, output <promise>DONE</promise> on its own line.",
  "Do not output it before that.",
].join("\n");

interface Case {
  name: string;
  message: string;
  expected: ClaimVerdict["reason"];
  promise?: string;
  prompt?: string;
}

// Cases from reports of loops that ended early (or never ended) on the wrong text.
const CASES: Case[] = [
  // A real claim.
  {
    name: "tag on its own line after a summary",
    message: "All 42 tests pass.\n\n<promise>DONE</promise>",
    expected: "found",
  },
  { name: "tag alone", message: "<promise>DONE</promise>", expected: "found" },
  { name: "tag after a colon", message: "Task complete: <promise>DONE</promise>", expected: "found" },
  {
    name: "apostrophes in the claim line are not quotes",
    message: "Everything's green and the docs' examples run: <promise>DONE</promise>",
    expected: "found",
  },
  {
    name: "a negation in an earlier sentence does not count",
    message: "Tests didn't fail this time. <promise>DONE</promise>",
    expected: "found",
  },
  {
    name: "'no' is not a negation of the claim",
    message: "No failures remain: <promise>DONE</promise>",
    expected: "found",
  },
  {
    name: "an unmatched backtick earlier is literal text",
    message: "Renamed `foo.\n<promise>DONE</promise>",
    expected: "found",
  },
  {
    name: "a code span elsewhere on the line",
    message: "Removed the `<promise>` hack. <promise>DONE</promise>",
    expected: "found",
  },
  {
    name: "'I will now output' is the act of claiming",
    message: "All checks are green, so I will now output the promise: <promise>DONE</promise>",
    expected: "found",
  },
  { name: "CRLF line endings", message: "All done.\r\n<promise>DONE</promise>\r\n", expected: "found" },

  // The prompt echoed back.
  {
    name: "whole prompt echoed",
    message: `You asked me:\n${PROMPT}\nI will start by reading the tests.`,
    prompt: PROMPT,
    expected: "echoed_prompt",
  },
  {
    name: "whole prompt echoed with other whitespace",
    message: `Task:\n${PROMPT.replace(/ /g, "  ").replace(/\n/g, "\n\n")}`,
    prompt: PROMPT,
    expected: "echoed_prompt",
  },
  {
    name: "the instruction line echoed",
    message:
      "Per the task: when every test passes, output <promise>DONE</promise> on its own line.\n2 tests still fail.",
    prompt: PROMPT,
    expected: "echoed_prompt",
  },
  {
    name: "echo first, then a real claim",
    message: `${PROMPT}\n\nAll tests pass.\n<promise>DONE</promise>`,
    prompt: PROMPT,
    expected: "found",
  },
  {
    name: "a prompt that is only the tag does not make the claim an echo",
    message: "<promise>DONE</promise>",
    prompt: "<promise>DONE</promise>",
    expected: "found",
  },
  {
    name: "without the prompt an instruction-like line is judged as prose",
    message: "Per the task: when every test passes, output <promise>DONE</promise> on its own line.",
    expected: "found",
  },

  // Negated.
  {
    name: "will not output ... yet",
    message: "I will not output <promise>DONE</promise> yet because 2 tests fail.",
    expected: "negated",
  },
  {
    name: "cannot honestly say",
    message: "I cannot honestly say <promise>DONE</promise> while the build is red.",
    expected: "negated",
  },
  { name: "can't say", message: "I can't say <promise>DONE</promise>.", expected: "negated" },
  {
    name: "can’t with a typographic apostrophe",
    message: "I can’t output <promise>DONE</promise> until lint passes.",
    expected: "negated",
  },
  {
    name: "not yet ... <promise>",
    message: "Not yet — the migration is half done, so no <promise>DONE</promise> from me.",
    expected: "negated",
  },
  {
    name: "not done yet, then the tag on the same line",
    message: "I'm not done yet. <promise>DONE</promise>",
    expected: "negated",
  },
  {
    name: "negated after the tag",
    message: "<promise>DONE</promise> would be premature: the linter still fails.",
    expected: "negated",
  },
  { name: "'is not' after the tag", message: "<promise>DONE</promise> is not warranted yet", expected: "negated" },

  // Future intent and conditions. Decided rule: a statement of future intent or a condition says the work is
  // not done yet, so it is not a claim; only "now" with a modal ("I will now output …") is the claim itself.
  {
    name: "once finished I will print",
    message: "Once finished I will print <promise>DONE</promise>.",
    expected: "negated",
  },
  {
    name: "I'll output ... when",
    message: "I'll output <promise>DONE</promise> when the tests pass.",
    expected: "negated",
  },
  {
    name: "I will output (future, no 'now')",
    message: "Next I will output <promise>DONE</promise>",
    expected: "negated",
  },
  { name: "if all tests pass", message: "If all tests pass, <promise>DONE</promise>", expected: "negated" },
  {
    name: "now ... once (a condition after the tag)",
    message: "I will now output <promise>DONE</promise> once CI is green",
    expected: "negated",
  },

  // Quoted.
  {
    name: "double quotes",
    message: 'The prompt says to print "<promise>DONE</promise>" at the end.',
    expected: "quoted",
  },
  {
    name: "double quotes with words inside",
    message: 'It asks for "the tag <promise>DONE</promise> on a line" later.',
    expected: "quoted",
  },
  { name: "single quotes", message: "Remember to print '<promise>DONE</promise>' at the end.", expected: "quoted" },
  {
    name: "single quotes after an apostrophe",
    message: "I don't print '<promise>DONE</promise>' before the tests pass.",
    expected: "quoted",
  },
  {
    name: "typographic double quotes",
    message: "The completion tag is “<promise>DONE</promise>”.",
    expected: "quoted",
  },
  { name: "Markdown block quote", message: "The task ends with:\n> <promise>DONE</promise>", expected: "quoted" },

  // Code.
  { name: "backtick span", message: "The loop stops on `<promise>DONE</promise>`.", expected: "code" },
  { name: "double-backtick span", message: "Print ``<promise>DONE</promise>`` when done.", expected: "code" },
  { name: "fenced block", message: "Example:\n```\n<promise>DONE</promise>\n```\nStill working.", expected: "code" },
  { name: "tilde fence with info string", message: "~~~text\nsee <promise>DONE</promise>\n~~~", expected: "code" },
  { name: "unclosed fence runs to the end", message: "```sh\necho '<promise>DONE</promise>'", expected: "code" },
  {
    name: "quoted first, real claim later",
    message: 'I was told to print "<promise>DONE</promise>".\nAll tests pass now.\n<promise>DONE</promise>',
    expected: "found",
  },

  // Whitespace, case and the bare phrase.
  {
    name: "runs of whitespace and newlines inside the tag",
    message: "<promise>  ALL\n  TESTS   PASS \n</promise>",
    promise: "ALL TESTS PASS",
    expected: "found",
  },
  {
    name: "runs of whitespace in the expected text",
    message: "<promise>ALL TESTS PASS</promise>",
    promise: "  ALL  TESTS\nPASS ",
    expected: "found",
  },
  {
    name: "multi-word phrase",
    message: "Suite finished: 120 passed.\n<promise>ALL TESTS PASS</promise>",
    promise: "ALL TESTS PASS",
    expected: "found",
  },
  {
    name: "a different phrase",
    message: "<promise>SOME TESTS PASS</promise>",
    promise: "ALL TESTS PASS",
    expected: "absent",
  },
  { name: "bare phrase without the tag", message: "DONE", expected: "bare_phrase" },
  { name: "bare phrase in prose", message: "Everything is DONE now.", expected: "bare_phrase" },
  { name: "wrong case in the text", message: "<promise>done</promise>", expected: "absent" },
  { name: "wrong case in the tag", message: "<PROMISE>DONE</PROMISE>", expected: "bare_phrase" },
  { name: "half a tag", message: "<promise>DONE", expected: "bare_phrase" },
  { name: "nothing at all", message: "Working on the parser.", expected: "absent" },
  { name: "empty message", message: "", expected: "absent" },
];

for (const c of CASES) {
  test(`promise: ${c.name} → ${c.expected}`, () => {
    const verdict = findClaim(c.message, c.promise ?? "DONE", c.prompt);
    assert.equal(verdict.reason, c.expected, `detail: ${verdict.detail ?? ""}`);
    assert.equal(verdict.found, c.expected === "found");
  });
}

test("promise: the tag as the last line of a long final message counts", () => {
  const report = Array.from(
    { length: 400 },
    (_, i) => `- step ${i}: updated module ${i} and its "tests"; didn't touch \`api\``,
  ).join("\n");
  const verdict = findClaim(`${report}\n\nEverything is verified.\n<promise>COMPLETE</promise>`, "COMPLETE", PROMPT);
  assert.deepEqual([verdict.found, verdict.reason], [true, "found"]);
});

test("promise: only the text it is given is looked at (the caller passes the final message)", () => {
  const earlier = "Plan: fix the tests.\n<promise>DONE</promise>";
  const final = "I found two more failures and I am fixing them.";
  assert.equal(findClaim(earlier, "DONE").found, true);
  assert.equal(findClaim(final, "DONE").found, false);
  assert.equal(findClaim(final, "DONE").reason, "absent");
});

test("promise: an empty expected text never matches", () => {
  assert.equal(findClaim("<promise></promise>", "").found, false);
  assert.equal(findClaim("<promise> </promise>", "  \n").found, false);
});

test("promise: normaliseWhitespace collapses runs and trims", () => {
  assert.equal(normaliseWhitespace("  ALL\t\tTESTS \r\n PASS  "), "ALL TESTS PASS");
  assert.equal(normaliseWhitespace("\u00a0x\u00a0 y"), "x y");
  assert.equal(normaliseWhitespace(""), "");
});
