// Sandbox start-up cost: ralph running `true` as its agent for 50 iterations under --sandbox (no network, and
// with an allowlist, which adds the proxy's forwarder) against the same run unsandboxed, in the same round.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, eventTime, readEvents, runDir, scratchDir, startRalph } from "./ralph-cli.js";
import type { Row } from "./report.js";
import { retryOnce, Samples } from "./stats.js";

const ITERATIONS = 50;
const TARGET_MS = 30;
const VARIANTS = { plain: "off", none: "on", allow: "allowlist" } as const;
type Variant = keyof typeof VARIANTS;

/** A project whose ralph.yaml sets the variant's sandbox. */
function project(base: string, variant: Variant): string {
  const dir = join(base, variant);
  mkdirSync(dir, { recursive: true });
  const yaml =
    variant === "plain"
      ? "sandbox: off\n"
      : variant === "none"
        ? "sandbox:\n  network: none\n"
        : 'sandbox:\n  network:\n    allow: ["127.0.0.1:9"]\n';
  writeFileSync(join(dir, "ralph.yaml"), yaml);
  return dir;
}

/** Measures `runs` rounds of the three variants; each figure is per iteration, first iteration_started → run_ended. */
export async function benchSandbox(runs: number, log: (line: string) => void): Promise<Row[]> {
  const base = scratchDir("sandbox");
  const dirs = Object.fromEntries(
    (Object.keys(VARIANTS) as Variant[]).map((variant) => [variant, project(base, variant)]),
  ) as Record<Variant, string>;
  const samples = new Samples();
  let attempt = 0;
  const perIteration = async (variant: Variant): Promise<number> => {
    const id = `sandbox-${++attempt}`;
    // Each variant's ralph.yaml says its sandbox: no RALPH_SANDBOX outranks it.
    const { RALPH_SANDBOX: _off, ...env } = cleanEnv();
    const ralph = startRalph(
      ["run", "--name", id, "-n", String(ITERATIONS), "--agent", "command", "bench", "--", "true"],
      dirs[variant],
      { env },
    );
    const exit = await ralph.exited;
    if (exit.code !== 3)
      throw new Error(`ralph (${variant}) -n ${ITERATIONS} -- true: exit ${exit.code ?? exit.signal}: ${exit.stderr}`);
    const events = readEvents(runDir(dirs[variant], id));
    const first = eventTime(events, (event) => event.type === "iteration_started");
    const last = eventTime(events, (event) => event.type === "run_ended");
    if (first === null || last === null) throw new Error(`ralph (${variant}): no iteration_started/run_ended events`);
    return (last - first) / ITERATIONS;
  };
  for (let round = 0; round < runs; round++) {
    const plain = await retryOnce("sandbox (unsandboxed)", () => perIteration("plain"), log);
    const none = await retryOnce("sandbox (no network)", () => perIteration("none"), log);
    const allow = await retryOnce("sandbox (allowlist)", () => perIteration("allow"), log);
    samples.add("plain", plain);
    samples.add("none", none - plain);
    samples.add("allow", allow - plain);
    log(
      `sandbox: round ${round + 1}/${runs}: ${plain.toFixed(1)} ms per iteration unsandboxed, +${(none - plain).toFixed(1)} sandboxed, +${(allow - plain).toFixed(1)} with an allowlist`,
    );
  }
  const group = `Sandbox start-up, ${ITERATIONS} iterations of \`true\``;
  const row = (variant: "none" | "allow", figure: string, yaml: string): Row => {
    const value = samples.get(variant);
    return {
      group,
      figure,
      unit: "ms",
      value,
      ...(samples.get("plain")
        ? {
            baseline: {
              label: "per iteration unsandboxed",
              value: samples.get("plain") as NonNullable<ReturnType<Samples["get"]>>,
            },
          }
        : {}),
      target: `≤ ${TARGET_MS} ms`,
      met: value ? value.median <= TARGET_MS : null,
      note: "per iteration, sandboxed − unsandboxed, same round",
      command: `ralph run -n ${ITERATIONS} --agent command x -- true with ralph.yaml ${yaml}, against sandbox: off`,
    };
  };
  return [
    row("none", "ms per iteration added by --sandbox (network: none)", "sandbox: {network: none}"),
    row(
      "allow",
      "ms per iteration added by --sandbox with an allowlist (proxy forwarder)",
      "sandbox: {network: {allow: [...]}}",
    ),
  ];
}
