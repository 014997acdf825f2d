#!/usr/bin/env node
// The push action's step: every git bundle under BUNDLES_DIR (one per loop, from the loop jobs' artifacts)
// pushed to this repository as the one branch it holds. The loop jobs ran the agent unsandboxed, so a bundle
// is hostile data: it must hold exactly one ref, refs/heads/ralph/<id>, and its whole history; it is fetched
// into a fresh bare repository with no system, user or template configuration and pushed, never forced, with
// the token handed to git through its environment (GIT_CONFIG_COUNT), never on a command line or in a file.
import { Buffer } from "node:buffer";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BRANCH = /^refs\/heads\/ralph\/[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
const OID = /^[0-9a-f]{40}$/;
const HEADER_LIMIT = 64 * 1024;

const dir = (process.env.BUNDLES_DIR ?? "").trim();
const token = process.env.TOKEN ?? "";
const server = (process.env.GITHUB_SERVER_URL ?? "").trim();
const repository = (process.env.GITHUB_REPOSITORY ?? "").trim();
if (dir === "" || server === "" || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) {
  console.error("push: expected BUNDLES_DIR, GITHUB_SERVER_URL and GITHUB_REPOSITORY (owner/name)");
  process.exit(2);
}
const url = `${server}/${repository}.git`;

// git with nothing from this machine's configuration, only the https and file transports, and no prompt.
const baseEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ALLOW_PROTOCOL: "https:file",
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "fetch.fsckObjects",
  GIT_CONFIG_VALUE_0: "true",
};
// The push alone gets the token, as an http header for this server's URLs.
const pushEnv = {
  ...baseEnv,
  GIT_CONFIG_COUNT: "2",
  GIT_CONFIG_KEY_1: `http.${server}/.extraheader`,
  GIT_CONFIG_VALUE_1: `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`,
};

function git(gitDir, args, env = baseEnv) {
  return spawnSync("git", [`--git-dir=${gitDir}`, ...args], {
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The bundle's header: its one branch and that branch's commit, or why it is refused. */
function readHeader(file) {
  const fd = openSync(file, "r");
  const buffer = Buffer.alloc(HEADER_LIMIT);
  const length = readSync(fd, buffer, 0, HEADER_LIMIT, 0);
  closeSync(fd);
  const text = buffer.subarray(0, length).toString("latin1");
  const end = text.indexOf("\n\n");
  if (end < 0) return { ok: false, reason: "no bundle header" };
  const [signature, ...lines] = text.slice(0, end).split("\n");
  if (signature !== "# v2 git bundle" && signature !== "# v3 git bundle")
    return { ok: false, reason: "not a v2 or v3 git bundle" };
  const refs = [];
  for (const line of lines) {
    if (line === "@object-format=sha1") continue;
    if (line.startsWith("@")) return { ok: false, reason: `unexpected capability ${JSON.stringify(line)}` };
    if (line.startsWith("-")) return { ok: false, reason: "it needs commits it does not hold (prerequisites)" };
    const space = line.indexOf(" ");
    refs.push({ oid: line.slice(0, space), name: line.slice(space + 1) });
  }
  if (refs.length !== 1) return { ok: false, reason: `expected exactly one ref, found ${refs.length}` };
  const [{ oid, name }] = refs;
  if (!OID.test(oid) || !BRANCH.test(name))
    return { ok: false, reason: `expected one ref refs/heads/ralph/<id>, found ${JSON.stringify(name)}` };
  const format = spawnSync("git", ["check-ref-format", name], { env: baseEnv });
  if (format.status !== 0) return { ok: false, reason: `not a valid ref name: ${JSON.stringify(name)}` };
  return { ok: true, oid, name };
}

/** Verifies, fetches and pushes one bundle; an error line when it is refused or fails. */
function pushBundle(file, claimed) {
  const header = readHeader(file);
  if (!header.ok) return { ok: false, refused: true, message: header.reason };
  const { oid, name } = header;
  if (claimed.has(name)) return { ok: false, refused: true, message: `${name} is in more than one bundle` };
  claimed.add(name);
  const fresh = mkdtempSync(join(tmpdir(), "ralph-push-"));
  try {
    const steps = [
      ["init", "--quiet", "--bare", "--template="],
      ["bundle", "verify", "--quiet", file],
      ["fetch", "--quiet", "--no-tags", "--", file, `${name}:${name}`],
    ];
    for (const args of steps) {
      const done = spawnSync("git", args[0] === "init" ? [...args, fresh] : [`--git-dir=${fresh}`, ...args], {
        env: baseEnv,
        encoding: "utf8",
      });
      if (done.status !== 0)
        return {
          ok: false,
          refused: args[0] !== "init",
          message: `git ${args[0]} ${args[1] ?? ""}: ${(done.stderr ?? "").trim().split("\n").at(-1)}`,
        };
    }
    const tip = git(fresh, ["rev-parse", "--verify", `${name}^{commit}`]);
    if (tip.status !== 0 || tip.stdout.trim() !== oid)
      return { ok: false, refused: true, message: `${name} is not the commit its header names` };
    const push = git(fresh, ["push", "--quiet", "--", url, `${name}:${name}`], pushEnv);
    if (push.status !== 0)
      return { ok: false, refused: false, message: `git push ${name}: ${push.stderr.trim().split("\n").at(-1)}` };
    return { ok: true, message: `pushed ${name.slice("refs/heads/".length)} (${oid.slice(0, 12)})` };
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/** Every regular file under `root`, in name order (artifacts download as one directory each). */
function files(root) {
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) =>
      entry.isDirectory() ? files(join(root, entry.name)) : entry.isFile() ? [join(root, entry.name)] : [],
    );
}

const bundles = files(resolve(dir));
if (bundles.length === 0) console.log("no task branch to push");
const claimed = new Set();
let refused = 0;
let failed = 0;
for (const file of bundles) {
  const result = pushBundle(file, claimed);
  if (result.ok) console.log(result.message);
  else {
    console.log(`::error::bundle ${file.slice(resolve(dir).length + 1)}: ${result.message.replace(/[\r\n]+/g, " ")}`);
    if (result.refused) refused++;
    else failed++;
  }
}
process.exit(failed > 0 ? 1 : refused > 0 ? 2 : 0);
