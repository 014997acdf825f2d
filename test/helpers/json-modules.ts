// A module loader hook: `import x from "./file.json"` without `with { type: "json" }`, as bundler-built
// packages write it (@actions/workflow-parser does), loads as JSON instead of failing on Node 20.
interface LoadContext {
  format?: string | null;
  importAttributes?: Record<string, string>;
}
type NextLoad = (url: string, context: LoadContext) => Promise<unknown>;

/** Loads `.json` URLs as JSON modules, everything else as Node would. */
export async function load(url: string, context: LoadContext, nextLoad: NextLoad): Promise<unknown> {
  if (!url.endsWith(".json")) return nextLoad(url, context);
  return nextLoad(url, { ...context, importAttributes: { ...context.importAttributes, type: "json" } });
}
