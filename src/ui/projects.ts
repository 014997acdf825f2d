// The projects a dashboard shows, and the one check through which a request names a run of one of them.
import { basename, resolve } from "node:path";
import { runIds } from "../control/list-runs.js";
import { runPaths, type RunPaths } from "../store/run-paths.js";

/** A project the dashboard serves; `key` is its index, the only way a URL names it. */
export interface Project {
  key: string;
  dir: string;
  name: string;
}

/** A run a request may act on: its project and files. */
export interface RunRef {
  project: Project;
  id: string;
  paths: RunPaths;
}

/** Run ids as `ralph run` writes them (no dots first, no slashes): never a path of their own. */
const RUN_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** One Project per directory, in the order given (duplicates dropped). */
export function projectsOf(dirs: string[]): Project[] {
  const unique = [...new Set(dirs.map((dir) => resolve(dir)))];
  return unique.map((dir, index) => ({ key: String(index), dir, name: basename(dir) || dir }));
}

/** The run `id` of the project with `key`, or null when either is not one the dashboard serves. */
export function findRun(projects: Project[], key: string, id: string): RunRef | null {
  const project = projects.find((candidate) => candidate.key === key);
  if (!project || !RUN_ID.test(id) || !runIds(project.dir).includes(id)) return null;
  return { project, id, paths: runPaths(project.dir, id) };
}
