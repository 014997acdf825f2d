// The <ask> judge: which final messages ask a person a question, and why the others do not.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { findAsk, MAX_QUESTION_CHARS } from "../../src/judge/ask.js";

describe("findAsk", () => {
  test("a final <ask> is a question, trimmed; whitespace and CRLF after it are fine", () => {
    assert.deepEqual(findAsk("Two schemas exist.\r\n<ask>  Keep the old one?\n</ask>\r\n\n"), {
      found: true,
      question: "Keep the old one?",
    });
    assert.deepEqual(findAsk("I will now ask: <ask>Which port?</ask>"), { found: true, question: "Which port?" });
  });

  test("only the last tag counts, and it must end the message", () => {
    assert.deepEqual(findAsk("<ask>First?</ask> then <ask>Second?</ask>"), { found: true, question: "Second?" });
    const after = findAsk("<ask>Which port?</ask> I picked 8080 meanwhile.");
    assert.equal(after.found, false);
    assert.equal(after.found ? "" : after.reason, "not_at_end");
  });

  test("no tag, an empty tag, and a tag the prompt holds are not questions", () => {
    const reasons = [
      findAsk("All good."),
      findAsk("<ask> </ask>"),
      findAsk("Here is my question <ask>Which port?</ask>", "Copy this: Here is my question <ask>Which port?</ask>"),
    ].map((verdict) => (verdict.found ? "found" : verdict.reason));
    assert.deepEqual(reasons, ["absent", "empty", "echoed_prompt"]);
  });

  test("a fenced block ending the message is code, not a question", () => {
    const verdict = findAsk("Example:\n```\n<ask>Which port?</ask>\n```\n");
    assert.equal(verdict.found ? "found" : verdict.reason, "code");
  });

  test(`a question longer than ${MAX_QUESTION_CHARS} characters is cut, with an ellipsis`, () => {
    const verdict = findAsk(`<ask>${"x".repeat(MAX_QUESTION_CHARS + 10)}</ask>`);
    assert.ok(verdict.found);
    assert.equal(verdict.found && verdict.question, `${"x".repeat(MAX_QUESTION_CHARS)}…`);
  });
});
