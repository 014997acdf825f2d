// The shipped Kubernetes Job manifest as data, and what its podFailurePolicy does with a failed pod,
// following the Job controller's rules: the first rule that matches decides; none matching counts the
// failure toward backoffLimitPerIndex.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

/** deploy/kubernetes in the source tree (the tests run from dist/test). */
export const KUBERNETES_DIR = fileURLToPath(new URL("../../../deploy/kubernetes/", import.meta.url));

/** The parts of a Job this project reads. */
export interface JobManifest {
  apiVersion: string;
  kind: string;
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    backoffLimitPerIndex?: number;
    maxFailedIndexes?: number;
    podFailurePolicy?: { rules: PodFailureRule[] };
    template: {
      spec: {
        restartPolicy?: string;
        terminationGracePeriodSeconds?: number;
        containers: Array<{
          name: string;
          args?: string[];
          env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
        }>;
      };
    };
  };
}

/** One rule of a podFailurePolicy. */
export interface PodFailureRule {
  action: "Count" | "FailIndex" | "FailJob" | "Ignore";
  onExitCodes?: { containerName?: string; operator: "In" | "NotIn"; values: number[] };
  onPodConditions?: Array<{ type: string; status?: string }>;
}

/** Every YAML document of a file under deploy/kubernetes, as plain data. */
export function readManifests(file: string): unknown[] {
  return parseAllDocuments(readFileSync(`${KUBERNETES_DIR}${file}`, "utf8")).map((doc) => doc.toJS() as unknown);
}

/** The Job of job.yaml. */
export function readJob(): JobManifest {
  const job = readManifests("job.yaml").find((doc) => (doc as { kind?: string }).kind === "Job");
  if (!job) throw new Error("job.yaml holds no Job");
  return job as JobManifest;
}

/** A failed pod as the policy sees it: its container's exit code and the pod's conditions. */
export interface FailedPod {
  container: string;
  exitCode: number;
  conditions?: string[];
}

/** What the Job controller does with a failed pod: the action of the first matching rule, else Count. */
export function podFailureAction(job: JobManifest, pod: FailedPod): PodFailureRule["action"] {
  for (const rule of job.spec.podFailurePolicy?.rules ?? []) {
    if (rule.onExitCodes) {
      const { containerName, operator, values } = rule.onExitCodes;
      if (containerName !== undefined && containerName !== pod.container) continue;
      if (values.includes(pod.exitCode) === (operator === "In")) return rule.action;
    }
    if (
      rule.onPodConditions?.some(
        (condition) => (pod.conditions ?? []).includes(condition.type) && (condition.status ?? "True") === "True",
      )
    )
      return rule.action;
  }
  return "Count";
}

/** The value of `--flag` in an argv, or undefined. */
export function argValue(args: readonly string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
}
