// Which calls the built CLI answers without loading its command tree (see fast-start.ts).

/** What to do with `argv`: one of the quick answers, or the full CLI. */
export type Start =
  | { kind: "version" }
  | { kind: "status"; run: string | undefined; json: boolean }
  | { kind: "list"; active: boolean; json: boolean }
  | { kind: "hook-handle" }
  | { kind: "full" };

/** Recognises exactly the quick shapes; anything else (help, other flags, `--`) is the full CLI's. */
export function quickStart(argv: string[]): Start {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) return { kind: "version" };
  if (argv.length === 2 && argv[0] === "hook" && argv[1] === "handle") return { kind: "hook-handle" };
  if (argv[0] === "status" && argv.length <= 3) {
    const rest = argv.slice(1);
    const words = rest.filter((word) => word !== "--json");
    if (rest.length - words.length > 1 || words.length > 1 || words.some((word) => word.startsWith("-")))
      return { kind: "full" };
    return { kind: "status", run: words[0], json: words.length < rest.length };
  }
  if (argv[0] === "list" && argv.length <= 3) {
    const rest = argv.slice(1);
    if (new Set(rest).size !== rest.length || rest.some((word) => word !== "--json" && word !== "--active"))
      return { kind: "full" };
    return { kind: "list", active: rest.includes("--active"), json: rest.includes("--json") };
  }
  return { kind: "full" };
}
