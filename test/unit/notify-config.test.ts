// Notification targets from ralph.yaml and flags, URL redaction, and the event payload schema.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { z } from "zod";
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  notifyTargetsFromFlags,
  notifyTargetsFromRalphYaml,
  notifyTargetsFromYaml,
} from "../../src/notify/notify-config.js";
import { DEFAULT_NOTIFY_EVENTS } from "../../src/notify/notify-target.js";
import { redactUrl } from "../../src/notify/redact-url.js";
import { runEventSchema } from "../../src/notify/event-schema.js";

const WHERE = "ralph.yaml: line 7";

function yamlError(text: string): string {
  const result = notifyTargetsFromYaml(parse(text), WHERE);
  assert.equal(result.ok, false, `accepted: ${text}`);
  return result.ok ? "" : result.message;
}

describe("notify: entries in ralph.yaml", () => {
  test("command, webhook and desktop entries become targets, with default events where none are named", () => {
    const text = `- command: "notify.sh --to 'the team'"\n- webhook: https://hooks.slack.com/services/T1/B2/x3\n  format: slack\n  events: [run_ended, needs_human]\n- desktop: true\n  events: [stalled]\n`;
    assert.deepEqual(notifyTargetsFromYaml(parse(text), WHERE), {
      ok: true,
      targets: [
        { kind: "command", command: "notify.sh --to 'the team'", events: DEFAULT_NOTIFY_EVENTS },
        {
          kind: "webhook",
          url: "https://hooks.slack.com/services/T1/B2/x3",
          format: "slack",
          events: ["run_ended", "needs_human"],
        },
        { kind: "desktop", events: ["stalled"] },
      ],
    });
    assert.deepEqual(DEFAULT_NOTIFY_EVENTS, ["run_ended", "waiting_limit", "needs_human", "stalled"]);
  });

  test("a loaded ralph.yaml without notify: has no targets; with it, errors name its line", () => {
    assert.deepEqual(notifyTargetsFromRalphYaml({ file: "ralph.yaml", values: new Map() }), { ok: true, targets: [] });
    const bad = notifyTargetsFromRalphYaml({
      file: "ralph.yaml",
      values: new Map([["notify", { value: [{ desktop: "yes" }], line: 3 }]]),
    });
    assert.deepEqual(bad, { ok: false, message: 'ralph.yaml: line 3: notify[0].desktop: expected true, got "yes"' });
  });

  test("each bad entry is one line naming the key and what was expected", () => {
    assert.equal(
      yamlError("notify.sh"),
      `${WHERE}: notify: expected a list of entries (- command: CMD, - webhook: URL, - desktop: true), got "notify.sh"`,
    );
    assert.equal(
      yamlError(`- desktop: true\n- command: ""`),
      `${WHERE}: notify[1].command: expected a command line, got ""`,
    );
    assert.equal(
      yamlError("- webhook: ftp://example.com/x"),
      `${WHERE}: notify[0].webhook: expected an http(s) URL, got "ftp://example.com/x"`,
    );
    assert.equal(
      yamlError("- webhook: https://example.com\n  format: xml"),
      `${WHERE}: notify[0].format: expected json or slack, got "xml"`,
    );
    assert.match(
      yamlError("- webhook: https://example.com\n  events: [run_ended, done]"),
      /^ralph\.yaml: line 7: notify\[0\]\.events\[1\]: expected one of run_started, .*stalled, got "done"$/,
    );
    assert.equal(
      yamlError("- desktop: true\n  events: []"),
      `${WHERE}: notify[0].events: expected at least one event name, got []`,
    );
    assert.equal(
      yamlError("- desktop: true\n  format: slack"),
      `${WHERE}: notify[0]: unknown key "format" in a desktop entry (expected desktop, events)`,
    );
    assert.equal(
      yamlError("- pager: 1"),
      `${WHERE}: notify[0]: expected a mapping with one of command, webhook or desktop, got {"pager":1}`,
    );
    assert.equal(
      yamlError("- webhook: https://example.com\n  command: x"),
      `${WHERE}: notify[0]: expected one of command, webhook or desktop per entry, got command and webhook`,
    );
    assert.match(
      yamlError(`- command: "say 'hi"`),
      /^ralph\.yaml: line 7: notify\[0\]\.command: expected a shell command line \(run with sh -c\): .*[Uu]nterminated/,
    );
    // A bad URL is shown with its secrets hidden.
    assert.equal(
      yamlError("- webhook: https://u:pw@example.com/?token=abc\n  format: 1"),
      `${WHERE}: notify[0].format: expected json or slack, got 1`,
    );
    assert.doesNotMatch(yamlError("- webhook: ftp://u:pw@example.com/?token=abc"), /pw|abc/);
  });
});

describe("--notify, --webhook and --webhook-format", () => {
  test("repeatable flags become targets with the default events; desktop is the desktop target", () => {
    assert.deepEqual(
      notifyTargetsFromFlags({
        notify: ["desktop", `notify.sh "a b" c`],
        webhook: ["https://a.example/x", "http://127.0.0.1:9/y"],
        webhookFormat: "slack",
      }),
      {
        ok: true,
        targets: [
          { kind: "desktop", events: DEFAULT_NOTIFY_EVENTS },
          { kind: "command", command: `notify.sh "a b" c`, events: DEFAULT_NOTIFY_EVENTS },
          { kind: "webhook", url: "https://a.example/x", format: "slack", events: DEFAULT_NOTIFY_EVENTS },
          { kind: "webhook", url: "http://127.0.0.1:9/y", format: "slack", events: DEFAULT_NOTIFY_EVENTS },
        ],
      },
    );
    assert.deepEqual(notifyTargetsFromFlags({ webhook: ["https://a.example/x"] }), {
      ok: true,
      targets: [{ kind: "webhook", url: "https://a.example/x", format: "json", events: DEFAULT_NOTIFY_EVENTS }],
    });
    assert.deepEqual(notifyTargetsFromFlags({}), { ok: true, targets: [] });
  });

  test("bad flag values are one line naming the flag", () => {
    const message = (flags: Parameters<typeof notifyTargetsFromFlags>[0]): string => {
      const result = notifyTargetsFromFlags(flags);
      return result.ok ? "accepted" : result.message;
    };
    assert.equal(message({ notify: [" "] }), `--notify: expected a command line or "desktop", got " "`);
    assert.match(
      message({ notify: ["say 'hi"] }),
      /^--notify: expected a shell command line \(run with sh -c\): .*[Uu]nterminated/,
    );
    assert.equal(
      message({ webhook: ["example.com/hook"] }),
      `--webhook: expected an http(s) URL, got "example.com/hook"`,
    );
    assert.equal(
      message({ webhook: ["https://a.example"], webhookFormat: "xml" }),
      `--webhook-format: expected json or slack, got "xml"`,
    );
    assert.equal(message({ webhookFormat: "slack" }), "--webhook-format: expected alongside --webhook URL");
    assert.match(
      message({ notify: ["push"], notifyEvents: "iteration_ended,run_end" }),
      /^--notify-events: expected a comma-separated list of run_started, .*, got "iteration_ended,run_end"$/,
    );
    assert.equal(
      message({ notifyEvents: "run_ended" }),
      "--notify-events: expected alongside --notify CMD or --webhook URL",
    );
  });

  test("--notify-events gives every flag target those events instead of the default ones", () => {
    assert.deepEqual(
      notifyTargetsFromFlags({
        notify: ["push-branch"],
        webhook: ["https://a.example/x"],
        notifyEvents: "iteration_ended, run_ended",
      }),
      {
        ok: true,
        targets: [
          { kind: "command", command: "push-branch", events: ["iteration_ended", "run_ended"] },
          { kind: "webhook", url: "https://a.example/x", format: "json", events: ["iteration_ended", "run_ended"] },
        ],
      },
    );
  });
});

describe("redactUrl", () => {
  const cases: Array<[string, string, string[]]> = [
    [
      "https://hooks.slack.com/services/T0AAA/B0BBB/XyZsecret",
      "https://hooks.slack.com/services/[REDACTED]",
      ["T0AAA", "XyZsecret"],
    ],
    [
      "https://discord.com/api/webhooks/123456/tok_en-value",
      "https://discord.com/api/webhooks/123456/[REDACTED]",
      ["tok_en-value"],
    ],
    ["https://ntfy.sh/my-private-topic", "https://ntfy.sh/[REDACTED]", ["my-private-topic"]],
    [
      "https://api.telegram.org/bot123:AAH/sendMessage?chat_id=5",
      "https://api.telegram.org/bot[REDACTED]/sendMessage?chat_id=5",
      ["123:AAH"],
    ],
    [
      "https://acme.webhook.office.com/webhookb2/abc@def/IncomingWebhook/ghi/jkl",
      "https://acme.webhook.office.com/webhookb2/[REDACTED]/[REDACTED]/[REDACTED]/[REDACTED]",
      ["abc@def", "ghi"],
    ],
    [
      "https://u:p4ss@example.com/h?api_key=k1&access_token=k2&X-Signature=k3&page=2",
      "https://[REDACTED]@example.com/h?api_key=[REDACTED]&access_token=[REDACTED]&X-Signature=[REDACTED]&page=2",
      ["p4ss", "k1", "k2", "k3"],
    ],
    [
      "https://chat.example/hooks/9f8e7d6c5b4a3f2e1d0c",
      "https://chat.example/hooks/[REDACTED]",
      ["9f8e7d6c5b4a3f2e1d0c"],
    ],
  ];
  for (const [raw, expected, secrets] of cases) {
    test(`hides the secrets of ${new URL(raw).hostname}`, () => {
      // Known-false control: the raw URL holds them.
      for (const secret of secrets) assert.ok(raw.includes(secret));
      assert.equal(redactUrl(raw), expected);
    });
  }

  test("leaves a URL without secrets, and text that is no URL, as they are", () => {
    assert.equal(
      redactUrl("https://ntfy.example.org/alerts?priority=high"),
      "https://ntfy.example.org/alerts?priority=high",
    );
    assert.equal(redactUrl("not a url"), "not a url");
  });
});

describe("the event payload schema", () => {
  test("schemas/event.schema.json is generated from the zod schema and is current", () => {
    const committed = JSON.parse(
      readFileSync(new URL("../../../schemas/event.schema.json", import.meta.url), "utf8"),
    ) as unknown;
    assert.deepEqual(committed, JSON.parse(JSON.stringify(z.toJSONSchema(runEventSchema))));
  });

  test("accepts the events a run sends and rejects malformed ones", () => {
    const schema = JSON.parse(
      readFileSync(new URL("../../../schemas/event.schema.json", import.meta.url), "utf8"),
    ) as object;
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const base = { v: 1, ts: "2026-01-01T00:00:00.000Z", run: "r" };
    const good = [
      { ...base, type: "run_ended", reason: "STALLED", exit_code: 3, detail: "3 iterations without a change" },
      {
        ...base,
        type: "waiting_limit",
        iteration: 2,
        message: "limit",
        reset_at: null,
        resume_at: "2026-01-01T01:00:00.000Z",
      },
      { ...base, type: "needs_human", question: "Which port?", iteration: 4 },
      { ...base, type: "notification_failed", target: "desktop", event: "run_ended", error: "x", attempts: 0 },
      { ...base, type: "iteration_started", iteration: 1, task: null },
      { ...base, type: "agent_lingered", iteration: 1, agent: "claude", linger_ms: 10000 },
    ];
    for (const event of good) assert.ok(validate(event), `${event.type}: ${JSON.stringify(validate.errors)}`);
    assert.equal(validate({ ...base, type: "run_ended", reason: "DONE" }), false, "run_ended needs exit_code");
    assert.equal(validate({ ...base, type: "bogus" }), false);
    assert.equal(validate({ ...base, v: 2, type: "paused" }), false);
  });
});
