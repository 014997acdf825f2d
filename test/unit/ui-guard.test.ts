// The dashboard's guard and run lookup: Host, token, cookie, CSRF and origin checks; run ids that are paths.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bindGuard, checkRequest, createGuard, tokenCookie } from "../../src/ui/guard.js";
import { findRun, projectsOf } from "../../src/ui/projects.js";

const guard = createGuard();
bindGuard(guard, 4100, ["127.0.0.1:4100", "localhost:4100"]);
const cookie = `${guard.cookieName}=${guard.token}`;

function verdict(method: string, path: string, headers: Record<string, string>) {
  const req = { method, headers } as unknown as IncomingMessage;
  return checkRequest(guard, req, new URL(path, "http://x.invalid"));
}

const post = (headers: Record<string, string>) =>
  verdict("POST", "/api/run/0/x/pause", {
    host: "127.0.0.1:4100",
    cookie,
    origin: "http://127.0.0.1:4100",
    "x-ralph-csrf": guard.csrf,
    ...headers,
  });

describe("guard", () => {
  test("the token in the query sets the cookie; the cookie alone is enough; neither is refused", () => {
    assert.equal(verdict("GET", `/?token=${guard.token}`, { host: "127.0.0.1:4100" }).kind, "set-cookie");
    assert.equal(verdict("GET", "/", { host: "localhost:4100", cookie }).kind, "ok");
    assert.deepEqual(verdict("GET", "/", { host: "127.0.0.1:4100" }), {
      kind: "refused",
      status: 401,
      message: "missing or wrong token: open the URL ralph ui printed",
    });
    assert.equal(verdict("GET", `/?token=${guard.token.slice(1)}x`, { host: "127.0.0.1:4100" }).kind, "refused");
    assert.equal(
      verdict("GET", "/", { host: "127.0.0.1:4100", cookie: `ralph_ui_9999=${guard.token}` }).kind,
      "refused",
    );
    assert.match(tokenCookie(guard), /; HttpOnly; SameSite=Strict; Path=\/$/);
  });

  test("a Host that is not the dashboard's is refused, token or not", () => {
    for (const host of ["evil.example:4100", "127.0.0.1:4101", "127.0.0.1", ""]) {
      const result = verdict("GET", `/?token=${guard.token}`, { host, cookie });
      assert.equal(result.kind === "refused" && result.status, 421, host);
    }
  });

  test("a POST needs the same origin, a same-origin fetch and the CSRF token", () => {
    assert.equal(post({}).kind, "ok");
    assert.equal(post({ "sec-fetch-site": "same-origin" }).kind, "ok");
    const bads: Array<Record<string, string>> = [
      { origin: "http://evil.example" },
      { origin: "null" },
      { origin: "http://localhost:4100" },
      { "sec-fetch-site": "same-site" },
      { "x-ralph-csrf": "nope" },
    ];
    for (const bad of bads) {
      const result = post(bad);
      assert.equal(result.kind === "refused" && result.status, 403, JSON.stringify(bad));
    }
    const { origin: _origin, ...withoutOrigin } = {
      host: "127.0.0.1:4100",
      cookie,
      origin: "",
      "x-ralph-csrf": guard.csrf,
    };
    assert.equal(verdict("POST", "/api/run/0/x/pause", withoutOrigin).kind, "refused");
    assert.equal(verdict("DELETE", "/", { host: "127.0.0.1:4100", cookie }).kind, "refused");
  });

  test("a fresh guard refuses everything until bound", () => {
    const fresh = createGuard();
    assert.notEqual(fresh.token, guard.token);
    const req = { method: "GET", headers: { host: "127.0.0.1:4100" } } as unknown as IncomingMessage;
    assert.equal(checkRequest(fresh, req, new URL(`/?token=${fresh.token}`, "http://x.invalid")).kind, "refused");
  });
});

describe("findRun", () => {
  test("only a run directory of a served project is found; ids that are paths are not", () => {
    const root = mkdtempSync(join(tmpdir(), "ralph-ui-find-"));
    try {
      const served = join(root, "served");
      const other = join(root, "other");
      mkdirSync(join(served, ".ralph", "runs", "r1"), { recursive: true });
      mkdirSync(join(other, ".ralph", "runs", "secret"), { recursive: true });
      const projects = projectsOf([served]);
      assert.equal(findRun(projects, "0", "r1")?.paths.dir, join(served, ".ralph", "runs", "r1"));
      for (const id of ["..", ".", "../../other/.ralph/runs/secret", "r1/../r1", "secret", "", "r1\u0000"])
        assert.equal(findRun(projects, "0", id), null, id);
      assert.equal(findRun(projects, "1", "secret"), null);
      assert.equal(findRun(projects, "../other", "secret"), null);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
