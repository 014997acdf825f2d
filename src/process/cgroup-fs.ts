// Small readers and writers for cgroup files, and where this process's cgroups are mounted.
import { readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One mounted cgroup hierarchy: v2, or a v1 hierarchy with its controllers. */
export interface CgroupMount {
  version: 1 | 2;
  /** Where it is mounted. */
  mountPoint: string;
  /** The hierarchy path shown at the mount point (not "/" inside some containers). */
  root: string;
  /** v1 only: the controllers bound to this hierarchy. */
  controllers: string[];
}

/** Every cgroup mount, from /proc/self/mountinfo; [] when it cannot be read. */
export function cgroupMounts(mountinfo = readText("/proc/self/mountinfo") ?? ""): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [before, after] = line.split(" - ");
    if (before === undefined || after === undefined) continue;
    const fields = before.split(" ");
    const [fstype, , options] = after.split(" ");
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fstype === "cgroup2")
      mounts.push({ version: 2, mountPoint: unescape(mountPoint), root: unescape(root), controllers: [] });
    if (fstype === "cgroup")
      mounts.push({
        version: 1,
        mountPoint: unescape(mountPoint),
        root: unescape(root),
        controllers: (options ?? "").split(","),
      });
  }
  return mounts;
}

// mountinfo escapes space, tab, newline and backslash as octal.
function unescape(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** This process's cgroup paths from /proc/self/cgroup: "" → the v2 path, controller name → its v1 path. */
export function ownCgroups(text = readText("/proc/self/cgroup") ?? ""): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, controllers = "", path = "/"] = match;
    if (controllers === "") paths.set("", path);
    for (const name of controllers.split(",")) if (name !== "") paths.set(name, path);
  }
  return paths;
}

/** The directory of a hierarchy path under a mount, or null when the path lies outside what is mounted. */
export function pathUnder(mount: CgroupMount, path: string): string | null {
  if (mount.root === "/") return join(mount.mountPoint, path);
  if (path === mount.root) return mount.mountPoint;
  if (path.startsWith(`${mount.root}/`)) return join(mount.mountPoint, path.slice(mount.root.length));
  // Inside a cgroup namespace /proc/self/cgroup is already relative to the namespace root.
  return path.startsWith("/") && !path.startsWith("/..") ? join(mount.mountPoint, path) : null;
}

/** A file's text, or null when it cannot be read. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** A number from a one-value file ("max" and unreadable → null). */
export function readNumber(path: string): number | null {
  const text = readText(path)?.trim();
  if (text === undefined || text === "max" || !/^[0-9]+$/.test(text)) return null;
  return Number(text);
}

/** One key of a flat-keyed file such as cpu.stat or memory.events; null when absent. */
export function readKey(path: string, key: string): number | null {
  const match = new RegExp(`^${key} ([0-9]+)$`, "m").exec(readText(path) ?? "");
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** Writes a control file; returns null on success or the error's code and message. */
export function writeControl(dir: string, file: string, value: string): string | null {
  try {
    writeFileSync(join(dir, file), value);
    return null;
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    return failure.code ?? failure.message;
  }
}

/** The pids listed in a cgroup.procs file (empty when it cannot be read). */
export function readPids(dir: string): number[] {
  const text = readText(join(dir, "cgroup.procs"));
  if (text === null || text === "") return [];
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map(Number);
}

/** Removes an empty cgroup directory: "gone", or "busy" while a task (an unreaped zombie) still holds it, or "failed". */
export function removeDir(dir: string): "gone" | "busy" | "failed" {
  try {
    rmdirSync(dir);
    return "gone";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "gone" : code === "EBUSY" ? "busy" : "failed";
  }
}
