// Adds the Stop hook running `ralph hook handle` to `.claude/settings.local.json`, once, keeping everything else,
// and takes it out of the shared `.claude/settings.json` where older versions put it.
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomic } from "../store/atomic-write.js";

/** The outcome: whether the file changed, or why it was left alone. */
export type InstallResult = { ok: true; changed: boolean; file: string } | { ok: false; message: string };

/**
 * Seconds Claude Code gives the hook. Completion checks run inside it (each limited to 10 minutes); a hook
 * killed on timeout lets the session stop and leaves the loop where it was, to be judged at the next stop.
 */
export const HOOK_TIMEOUT_SECONDS = 1800;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Whether a hook command is ralph's Stop handler (this install's or another copy's, e.g. before ralph moved). */
export function isRalphHandleCommand(command: unknown): boolean {
  if (typeof command !== "string") return false;
  const trimmed = command.trim();
  return /(^|\s)hook\s+handle$/.test(trimmed) && /ralph|main\.c?js/.test(trimmed);
}

function ourEntry(command: string): Json {
  return { type: "command", command, timeout: HOOK_TIMEOUT_SECONDS };
}

/** A settings file's object and mode, or why it must be left alone. */
function readSettings(file: string): { ok: true; settings: Json; mode: number } | { ok: false; message: string } {
  if (!existsSync(file)) return { ok: true, settings: {}, mode: 0o644 };
  let text: string;
  let mode: number;
  try {
    text = readFileSync(file, "utf8");
    mode = statSync(file).mode & 0o777;
  } catch (error) {
    return {
      ok: false,
      message: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}); it was left unchanged`,
    };
  }
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      message: `${file} is not valid JSON (${(error as Error).message}); fix it by hand, ralph does not overwrite it`,
    };
  }
  if (!isObject(parsed))
    return { ok: false, message: `${file} does not hold a JSON object; fix it by hand, ralph does not overwrite it` };
  return { ok: true, settings: parsed, mode };
}

/** The Stop groups with every copy of ralph's handler taken out (groups left empty are dropped). */
function withoutRalph(stop: unknown[]): unknown[] {
  return stop
    .map((group: unknown) => {
      if (!isObject(group) || !Array.isArray(group.hooks)) return group;
      const remaining = group.hooks.filter((hook: unknown) => !(isObject(hook) && isRalphHandleCommand(hook.command)));
      return remaining.length === group.hooks.length
        ? group
        : remaining.length === 0
          ? null
          : { ...group, hooks: remaining };
    })
    .filter((group) => group !== null);
}

/** Installs `command` as a Stop hook in the settings file `file`, idempotently; an invalid file is never overwritten. */
export function installStopHook(file: string, command: string): InstallResult {
  const read = readSettings(file);
  if (!read.ok) return read;
  const { settings, mode } = read;
  const hooks = settings.hooks ?? {};
  if (!isObject(hooks))
    return { ok: false, message: `${file}: "hooks" is not an object; fix it by hand, ralph does not overwrite it` };
  const stop = hooks.Stop ?? [];
  if (!Array.isArray(stop))
    return { ok: false, message: `${file}: "hooks.Stop" is not a list; fix it by hand, ralph does not overwrite it` };

  const ours = stop
    .flatMap((group: unknown) => (isObject(group) && Array.isArray(group.hooks) ? group.hooks : []))
    .filter((hook) => isObject(hook) && isRalphHandleCommand(hook.command));
  const wanted = ourEntry(command);
  if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(wanted))
    return { ok: true, changed: false, file };

  // Other copies of ralph's handler (an old path, a duplicate) are replaced; every other hook stays where it is.
  const updated: Json = { ...settings, hooks: { ...hooks, Stop: [...withoutRalph(stop), { hooks: [wanted] }] } };
  // Not recursive: on a read-only file system a recursive mkdir reports ENOENT instead of EROFS.
  const dir = dirname(file);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: !existsSync(dirname(dir)), mode: 0o755 });
  writeFileAtomic(file, `${JSON.stringify(updated, null, 2)}\n`, mode);
  return { ok: true, changed: true, file };
}

/**
 * Takes ralph's Stop handler out of the shared `.claude/settings.json` (it holds a machine's absolute paths,
 * so it belongs in settings.local.json); every other setting stays as it was. Returns whether it changed
 * the file, or why it left it alone.
 */
export function removeStopHook(file: string): { ok: true; changed: boolean } | { ok: false; message: string } {
  const read = readSettings(file);
  if (!read.ok) return read;
  const { settings, mode } = read;
  const hooks = settings.hooks;
  if (!isObject(hooks) || !Array.isArray(hooks.Stop)) return { ok: true, changed: false };
  const stop = withoutRalph(hooks.Stop);
  if (stop.length === hooks.Stop.length && JSON.stringify(stop) === JSON.stringify(hooks.Stop))
    return { ok: true, changed: false };
  const { Stop: _stop, ...otherHooks } = hooks;
  const nextHooks: Json = stop.length > 0 ? { ...otherHooks, Stop: stop } : otherHooks;
  const { hooks: _hooks, ...rest } = settings;
  const updated: Json = Object.keys(nextHooks).length > 0 ? { ...rest, hooks: nextHooks } : rest;
  writeFileAtomic(file, `${JSON.stringify(updated, null, 2)}\n`, mode);
  return { ok: true, changed: true };
}
