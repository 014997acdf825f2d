// Reading where cgroups are mounted and where this process sits in them; sizes; launcher reports.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cgroupMounts, ownCgroups, pathUnder } from "../../src/process/cgroup-fs.js";
import { parseLauncherStatus } from "../../src/process/launcher.js";
import { parseSize } from "../../src/util/parse-value.js";

const HYBRID = [
  "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
  "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
].join("\n");

describe("cgroup mounts", () => {
  it("finds the v2 mount and the v1 controllers of a hybrid host", () => {
    const mounts = cgroupMounts(HYBRID);
    assert.deepEqual(
      mounts.map((mount) => [
        mount.version,
        mount.mountPoint,
        mount.version === 1 ? mount.controllers.includes("memory") || mount.controllers.includes("pids") : null,
      ]),
      [
        [1, "/sys/fs/cgroup/memory", true],
        [1, "/sys/fs/cgroup/pids", true],
        [2, "/sys/fs/cgroup/unified", null],
      ],
    );
  });

  it("reads the v2 path and each v1 controller's path from /proc/self/cgroup", () => {
    const own = ownCgroups("4:memory:/process_api/abc\n8:pids:/\n1:cpu,cpuacct:/x\n0::/user.slice/session-1.scope\n");
    assert.equal(own.get(""), "/user.slice/session-1.scope");
    assert.equal(own.get("memory"), "/process_api/abc");
    assert.equal(own.get("cpuacct"), "/x");
  });

  it("maps a hierarchy path under a mount whose root is not /", () => {
    const mount = { version: 2 as const, mountPoint: "/sys/fs/cgroup", root: "/docker/abc", controllers: [] };
    assert.equal(pathUnder(mount, "/docker/abc/sub"), "/sys/fs/cgroup/sub");
    assert.equal(pathUnder(mount, "/docker/abc"), "/sys/fs/cgroup");
    assert.equal(pathUnder(mount, "/.."), null);
    assert.equal(pathUnder({ ...mount, root: "/" }, "/a/b"), "/sys/fs/cgroup/a/b");
  });

  it("unescapes octal escapes in mount points", () => {
    const [mount] = cgroupMounts("41 31 0:38 / /mnt/my\\040cgroup rw - cgroup2 cgroup2 rw");
    assert.equal(mount?.mountPoint, "/mnt/my cgroup");
  });
});

describe("sizes", () => {
  it("reads K, M, G and T as powers of 1024, with or without B/iB", () => {
    assert.deepEqual(parseSize("512M"), { ok: true, value: 512 * 2 ** 20 });
    assert.deepEqual(parseSize("1.5g"), { ok: true, value: 1.5 * 2 ** 30 });
    assert.deepEqual(parseSize("2GiB"), { ok: true, value: 2 * 2 ** 30 });
    assert.deepEqual(parseSize(1048576), { ok: true, value: 1048576 });
  });

  it("refuses words, negative numbers and less than 1 MiB", () => {
    for (const bad of ["abc", "-1G", "1000", "", "1X"]) assert.equal(parseSize(bad).ok, false, bad);
  });
});

describe("launcher reports", () => {
  it("tells a start, a failed exec, a failed set-up and the agent's end apart", () => {
    assert.deepEqual(parseLauncherStatus("ok"), { kind: "ok" });
    assert.deepEqual(parseLauncherStatus("exec 2"), { kind: "failed", errno: 2, message: "exec 2" });
    assert.deepEqual(parseLauncherStatus("subreaper fork: Resource temporarily unavailable"), {
      kind: "failed",
      errno: null,
      message: "subreaper fork: Resource temporarily unavailable",
    });
    assert.deepEqual(parseLauncherStatus("exit code 3"), { kind: "exit", code: 3, signal: null });
    assert.deepEqual(parseLauncherStatus("exit signal 9"), { kind: "exit", code: null, signal: 9 });
  });
});
