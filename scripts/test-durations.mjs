// A node:test reporter for scripts/run-tests.mjs: one line per top-level test or suite, "<milliseconds>\t<file>",
// which that script adds up per file to name the slowest files at the end of a run.
export default async function* durations(source) {
  for await (const event of source) {
    if ((event.type !== "test:pass" && event.type !== "test:fail") || event.data.nesting !== 0 || !event.data.file)
      continue;
    yield `${Math.round(event.data.details?.duration_ms ?? 0)}\t${event.data.file}\n`;
  }
}
