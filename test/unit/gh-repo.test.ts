// ghRepoOf: the repository `ralph land --pr` names to gh, from the URL the branch was pushed to.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ghRepoOf } from "../../src/launch/run-gh.js";

test("https, ssh and scp-like URLs name OWNER/REPO (HOST/OWNER/REPO off github.com); anything else names none", () => {
  assert.equal(ghRepoOf("https://github.com/acme/widgets.git"), "acme/widgets");
  assert.equal(ghRepoOf("https://x-access-token:secret@github.com/acme/widgets"), "acme/widgets");
  assert.equal(ghRepoOf("git@github.com:acme/widgets.git"), "acme/widgets");
  assert.equal(ghRepoOf("ssh://git@github.example.com:2222/acme/widgets.git"), "github.example.com/acme/widgets");
  assert.equal(ghRepoOf("https://ghe.example.com/acme/my.repo"), "ghe.example.com/acme/my.repo");
  assert.equal(ghRepoOf("/srv/git/widgets.git"), null);
  assert.equal(ghRepoOf("file:///srv/git/acme/widgets.git"), null);
  assert.equal(ghRepoOf("https://github.com/acme"), null);
  assert.equal(ghRepoOf("ext::sh -c touch% /tmp/x"), null);
});
