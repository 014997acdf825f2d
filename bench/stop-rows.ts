// The rows of the stop-latency part of the table: ralph against each baseline, with survivors and a breakdown.
import type { Row } from "./report.js";
import type { Samples, Summary } from "./stats.js";

/** How the stop-latency samples were taken. */
export interface StopSetup {
  size: number;
  graceMs: number;
  /** Why cgroup.kill could not be measured here, or null when it was. */
  noCgroup: string | null;
  /** How ralph's runs ended (completion reason, exit signal). */
  reasons: string;
  /** The supervision modes ralph ran in. */
  modes: string[];
}

/** The table rows of the stop-latency samples (see stop-latency.ts for the sample names). */
export function stopRows(samples: Samples, setup: StopSetup): Row[] {
  const { size, graceMs, noCgroup, reasons, modes } = setup;
  const rows: Row[] = [];
  const tree = (ignorer: boolean) => `${size}-process tree${ignorer ? " with one TERM-ignorer" : " honouring TERM"}`;
  const command = (ignorer: boolean, grace: string) =>
    `ralph run -n 1 --grace ${grace} x -- sh -c '<${tree(ignorer)}>'; kill -TERM <ralph>`;
  for (const ignorer of [false, true]) {
    const kind = ignorer ? "ignorer" : "honour";
    const group = `Stop latency, ${tree(ignorer)}`;
    const floor = samples.get(`${kind}.perpid.ms`);
    const cgroupFloor = samples.get(`${kind}.cgroup.ms`);
    const survivorsNote = (name: string) => {
      const survivors = samples.get(`${kind}.${name}.survivors`);
      return survivors ? `survivors ${survivors.median} (${survivors.min}–${survivors.max})` : "";
    };
    for (const mode of modes) {
      const name = `ralph-${mode}`;
      const ralph = samples.get(`${kind}.${name}.ms`);
      const at = (summary: Summary | null) => (summary ? `${summary.median.toFixed(0)} ms` : "?");
      const breakdown =
        `medians: agent tree gone at ${at(samples.get(`${kind}.${name}.tree`))}, run_ended written at ${at(samples.get(`${kind}.${name}.ended`))}, ` +
        `ralph exited at ${at(samples.get(`${kind}.${name}.exit`))}, everything under ralph (its guardian too) gone at ${at(samples.get(`${kind}.${name}.all`))}`;
      const env = `RALPH_SUPERVISION=${mode} `;
      if (!ignorer) {
        // In cgroup mode the kernel's own kill is the floor to beat; elsewhere the per-pid SIGKILL loop.
        const base = mode === "cgroup" ? cgroupFloor : floor;
        rows.push({
          group,
          figure: `ralph (${mode} mode): SIGTERM → ralph exited, agent tree gone`,
          unit: "ms",
          value: ralph,
          ...(base
            ? { baseline: { label: mode === "cgroup" ? "cgroup.kill floor" : "per-pid SIGKILL floor", value: base } }
            : {}),
          target: "< 200 ms and ≤ 2× floor",
          met: ralph && base ? ralph.median < 200 && ralph.median <= 2 * base.median : null,
          note: `${breakdown}; ${survivorsNote(name)}; run ended ${reasons}`,
          command: env + command(false, "5s"),
        });
      } else {
        rows.push({
          group,
          figure: `ralph (${mode} mode, --grace ${graceMs} ms): SIGTERM → ralph exited, agent tree gone`,
          unit: "ms",
          value: ralph,
          ...(floor ? { baseline: { label: "per-pid SIGKILL floor", value: floor } } : {}),
          target: `≤ grace + 100 ms (${graceMs + 100})`,
          met: ralph ? ralph.median <= graceMs + 100 : null,
          note: `${breakdown}; ${survivorsNote(name)}`,
          command: env + command(true, `${graceMs}ms`),
        });
        const overshoot = ralph
          ? {
              ...ralph,
              median: ralph.median - graceMs,
              min: ralph.min - graceMs,
              max: ralph.max - graceMs,
              samples: ralph.samples.map((v) => v - graceMs),
            }
          : null;
        rows.push({
          group,
          figure: `ralph (${mode} mode): grace overshoot`,
          unit: "ms",
          value: overshoot,
          target: "≤ 100 ms",
          met: overshoot ? overshoot.median <= 100 : null,
          command: env + command(true, `${graceMs}ms`),
        });
      }
    }
    // The known-false control: a harness that sees no survivors of a naive kill proves nothing.
    const naiveSurvivors = samples.get(`${kind}.naive.survivors`);
    const control =
      naiveSurvivors && naiveSurvivors.median === 0
        ? "; CONTROL FAILED: no survivors seen, the harness proves nothing"
        : "";
    rows.push({
      group,
      figure: "naive kill(root, TERM): root gone",
      unit: "ms",
      value: samples.get(`${kind}.naive.ms`),
      note: `${survivorsNote("naive")}${control}`,
      command: "kill -TERM <root>",
    });
    rows.push({
      group,
      figure: "npm tree-kill(root, TERM)",
      unit: "ms",
      value: samples.get(`${kind}.treekill.ms`),
      note: survivorsNote("treekill"),
      command: "require('tree-kill')(<root>, 'SIGTERM', cb)",
    });
    rows.push({
      group,
      figure: "per-pid SIGKILL over a /proc snapshot (floor)",
      unit: "ms",
      value: floor,
      note: survivorsNote("perpid"),
      command: "read /proc/*/stat; kill -KILL each descendant",
    });
    rows.push({
      group,
      figure: "cgroup.kill (floor)",
      unit: "ms",
      value: cgroupFloor,
      note: cgroupFloor ? survivorsNote("cgroup") : `not measured: ${noCgroup ?? "?"}`,
      command: "echo 1 > <cgroup>/cgroup.kill",
    });
  }
  return rows;
}
