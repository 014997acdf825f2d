// Memory per loop: the total RSS of ralph's own processes (the parent, with its children's engines in it, and
// its guardian; before, a runner process and a guardian per child; never the agents or git)
// of `ralph run --parallel 8` while its 8 agents sleep, against one idle `node -e "setInterval(…)"`.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builds, cleanEnv, scratchDir } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { nowMs, retryOnce, Samples, sleep } from "./stats.js";

const CHILDREN = 8;

function stat(pid: number): { ppid: number; comm: string; rssKb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name: string) => new RegExp(`^${name}:\\s+(.*)$`, "m").exec(status)?.[1] ?? "";
    return { ppid: Number(field("PPid")), comm: field("Name"), rssKb: Number.parseInt(field("VmRSS"), 10) || 0 };
  } catch {
    return null;
  }
}

/** `root` and every descendant, with what each holds. */
function tree(root: number): Array<{ pid: number; comm: string; rssKb: number }> {
  const all = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
  const info = new Map(all.map((pid) => [pid, stat(pid)] as const));
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const [pid, value] of info) if (value?.ppid === found[i]) found.push(pid);
  return found.flatMap((pid) => {
    const value = info.get(pid);
    return value ? [{ pid, comm: value.comm, rssKb: value.rssKb }] : [];
  });
}

function repo(): string {
  const dir = scratchDir("parallel");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.test", ...args], {
      cwd: dir,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  const stories = Array.from({ length: CHILDREN }, (_, i) => ({
    id: `S${i + 1}`,
    title: `story ${i + 1}`,
    priority: i + 1,
    passes: false,
  }));
  writeFileSync(join(dir, "prd.json"), `${JSON.stringify({ userStories: stories }, null, 2)}\n`);
  writeFileSync(join(dir, ".gitignore"), ".ralph/\n");
  git("add", "-A");
  git("commit", "-q", "-m", "stories");
  return dir;
}

/** Total RSS (MB) of ralph's processes once all 8 agents sleep, and how many processes that was. */
async function parallelRss(main: string, dir: string, name: string): Promise<{ mb: number; processes: number }> {
  const child = spawn(
    process.execPath,
    [
      main,
      "run",
      "--tasks",
      "prd.json",
      "--parallel",
      String(CHILDREN),
      "-n",
      "1",
      "--name",
      name,
      "work",
      "--",
      "sleep",
      "30",
    ],
    { cwd: dir, env: cleanEnv(), stdio: "ignore" },
  );
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    const deadline = nowMs() + 60_000;
    for (;;) {
      const procs = tree(child.pid as number);
      const agents = procs.filter((proc) => proc.comm === "sleep").length;
      if (agents === CHILDREN) {
        await sleep(500); // settled: no child still starting
        const ours = tree(child.pid as number).filter((proc) => proc.comm !== "sleep" && proc.comm !== "git");
        return { mb: ours.reduce((sum, proc) => sum + proc.rssKb, 0) / 1024, processes: ours.length };
      }
      if (nowMs() > deadline || child.exitCode !== null)
        throw new Error(`--parallel ${CHILDREN}: ${agents} agents running after 60 s`);
      await sleep(100);
    }
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

async function idleNode(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e3)"], { stdio: "ignore" });
  await sleep(500);
  const kb = stat(child.pid as number)?.rssKb ?? 0;
  child.kill("SIGKILL");
  return kb / 1024;
}

/** Measures `runs` rounds, each build next to the idle Node. */
export async function benchParallelMemory(runs: number, log: (line: string) => void): Promise<Row[]> {
  const samples = new Samples();
  const counts = new Map<string, number>();
  let counter = 0;
  for (let round = 0; round < runs; round++) {
    samples.add("node", await idleNode());
    for (const { label, main } of builds()) {
      const measured = await retryOnce(`parallel${label}`, () => parallelRss(main, repo(), `p${++counter}`), log);
      samples.add(`parallel${label}`, measured.mb);
      counts.set(label, measured.processes);
      log(
        `parallel${label} round ${round + 1}/${runs}: ${measured.mb.toFixed(0)} MB in ${measured.processes} processes`,
      );
    }
  }
  const node = samples.get("node");
  return builds().map(({ label }) => {
    const value = samples.get(`parallel${label}`);
    return {
      group: "Memory per loop",
      figure: `ralph's own processes, --parallel ${CHILDREN}, 8 agents sleeping${label}`,
      unit: "MB",
      value,
      ...(node ? { baseline: { label: "one idle node", value: node } } : {}),
      target: "≤ 3× one idle node",
      met: value && node ? value.median <= 3 * node.median : null,
      note: `${counts.get(label) ?? "?"} processes of ralph's own (agents and git not counted)`,
      command: `ralph run --tasks prd.json --parallel ${CHILDREN} -n 1 work -- sleep 30`,
    };
  });
}
