// Runs a composite action's steps on this machine as a runner would: expressions evaluated with GitHub's
// own evaluator (@actions/expressions), each `run` step in `bash --noprofile --norc -eo pipefail` with fresh
// GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, outputs collected per step id. `uses` steps are not run: their
// evaluated `if` and `with` are returned for the caller to check. Steps named in `skip` are left out.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Evaluator, Lexer, Parser, data } from "@actions/expressions";
import { parse } from "yaml";

interface ActionStep {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string>;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
}

interface ActionFile {
  inputs?: Record<string, { default?: string; required?: boolean }>;
  outputs?: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

/** What a run of the action did. */
export interface ActionRun {
  outputs: Record<string, string>;
  summary: string;
  steps: Array<{
    name: string;
    ran: boolean;
    exitCode: number | null;
    stdout: string;
    stderr: string;
    with?: Record<string, string>;
  }>;
  failed: boolean;
}

function dictionary(values: Record<string, unknown>): data.Dictionary {
  const dict = new data.Dictionary();
  for (const [key, value] of Object.entries(values)) {
    dict.add(
      key,
      typeof value === "string" ? new data.StringData(value) : dictionary(value as Record<string, unknown>),
    );
  }
  return dict;
}

/** One expression's value as text, with `inputs`, `steps` and `github` as contexts. */
function evaluate(expression: string, contexts: Record<string, unknown>): string {
  const lexed = new Lexer(expression).lex();
  const tree = new Parser(lexed.tokens, Object.keys(contexts), []).parse();
  return new Evaluator(tree, dictionary(contexts)).evaluate().coerceString();
}

/** `text` with every `${{ … }}` replaced by its value. */
function substitute(text: string, contexts: Record<string, unknown>): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expression: string) => evaluate(expression.trim(), contexts));
}

/** GITHUB_OUTPUT's (and GITHUB_ENV's) `key=value` lines and `key<<DELIMITER` blocks. */
export function parseEnvFile(text: string): Record<string, string> {
  const lines = text.split("\n");
  const values: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc?.[1] && heredoc[2]) {
      const end = lines.indexOf(heredoc[2], i + 1);
      values[heredoc[1]] = lines.slice(i + 1, end).join("\n");
      i = end;
    } else if (line.includes("=")) values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
  }
  return values;
}

function bash(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      "bash",
      ["--noprofile", "--norc", "-eo", "pipefail", script],
      { cwd, env, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs the composite action in `actionDir` with `inputs`, in `workspace`, with `env` as the runner's environment. */
export async function runCompositeAction(
  actionDir: string,
  inputs: Record<string, string>,
  options: { workspace: string; env: NodeJS.ProcessEnv; skip?: readonly string[] },
): Promise<ActionRun> {
  const action = parse(readFileSync(join(actionDir, "action.yml"), "utf8")) as ActionFile;
  if (action.runs.using !== "composite") throw new Error("not a composite action");
  const given: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs ?? {})) {
    if (spec.required && inputs[name] === undefined) throw new Error(`input ${name} is required`);
    given[name] = inputs[name] ?? spec.default ?? "";
  }
  const temp = mkdtempSync(join(tmpdir(), "ralph-action-"));
  const steps: Record<string, { outputs: Record<string, string> }> = {};
  const contexts = () => ({ inputs: given, steps, github: { action_path: actionDir, workspace: options.workspace } });
  const run: ActionRun = { outputs: {}, summary: "", steps: [], failed: false };
  for (const [n, step] of action.runs.steps.entries()) {
    const name = step.name ?? step.uses ?? `step ${n}`;
    const wanted = !run.failed && (step.if === undefined || evaluate(step.if, contexts()) === "true");
    if (!wanted || options.skip?.includes(name)) {
      run.steps.push({ name, ran: false, exitCode: null, stdout: "", stderr: "" });
      continue;
    }
    if (step.uses !== undefined) {
      const withValues = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([key, value]) => [key, substitute(String(value), contexts())]),
      );
      run.steps.push({ name, ran: false, exitCode: null, stdout: "", stderr: "", with: withValues });
      continue;
    }
    if (step.shell !== "bash" || step.run === undefined) throw new Error(`${name}: only bash run steps are run here`);
    const script = join(temp, `step-${n}.sh`);
    writeFileSync(script, substitute(step.run, contexts()));
    const output = join(temp, `output-${n}`);
    const summary = join(temp, `summary-${n}`);
    writeFileSync(output, "");
    writeFileSync(summary, "");
    const env: NodeJS.ProcessEnv = {
      ...options.env,
      GITHUB_ACTION_PATH: actionDir,
      GITHUB_WORKSPACE: options.workspace,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
    };
    for (const [key, value] of Object.entries(step.env ?? {})) env[key] = substitute(String(value), contexts());
    const cwd = resolve(options.workspace, substitute(step["working-directory"] ?? ".", contexts()));
    const result = await bash(script, cwd, env);
    run.steps.push({ name, ran: true, exitCode: result.code, stdout: result.stdout, stderr: result.stderr });
    if (step.id) steps[step.id] = { outputs: parseEnvFile(readFileSync(output, "utf8")) };
    run.summary += readFileSync(summary, "utf8");
    if (result.code !== 0) run.failed = true;
  }
  for (const [name, spec] of Object.entries(action.outputs ?? {}))
    run.outputs[name] = substitute(spec.value, contexts());
  return run;
}
