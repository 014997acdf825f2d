// Checks every relative link in the project's Markdown (README.md, CONTRIBUTING.md, docs/**, bench/RESULTS.md):
// the file it names must exist, and a #fragment must name a heading of that file (GitHub's anchor rules).
// `node scripts/check-links.mjs [ROOT] [--json]` prints the broken links and exits 1 when there is one.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The Markdown files whose links are checked, relative to root. */
export function markdownFiles(root) {
  const found = ["README.md", "CONTRIBUTING.md", "bench/RESULTS.md"].filter((file) => existsSync(join(root, file)));
  const walk = (dir) => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .replace(/<[^>]*>/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every inline link target outside code, with its line number. */
function linksOf(markdown) {
  const links = [];
  let fence = false;
  markdown.split("\n").forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) return;
    const prose = line.replace(/`[^`]*`/g, "");
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      links.push({ target: match[1], line: index + 1 });
  });
  return links;
}

/** The broken relative links under root, as { file, line, target, why }. */
export function brokenLinks(root) {
  const broken = [];
  const anchorCache = new Map();
  const anchors = (path) => {
    if (!anchorCache.has(path)) anchorCache.set(path, anchorsOf(readFileSync(path, "utf8")));
    return anchorCache.get(path);
  };
  for (const file of markdownFiles(root)) {
    const source = join(root, file);
    for (const { target, line } of linksOf(readFileSync(source, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like: not ours to check
      const [pathPart, fragment] = target.split("#", 2);
      const path = pathPart === "" ? source : resolve(dirname(source), decodeURIComponent(pathPart));
      if (!existsSync(path)) {
        broken.push({ file, line, target, why: `no such file: ${relative(root, path)}` });
        continue;
      }
      if (fragment && statSync(path).isFile() && path.endsWith(".md") && !anchors(path).has(fragment.toLowerCase())) {
        broken.push({ file, line, target, why: `no heading #${fragment} in ${relative(root, path)}` });
      }
    }
  }
  return broken;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const root = resolve(args.find((arg) => !arg.startsWith("--")) ?? ".");
  const broken = brokenLinks(root);
  if (args.includes("--json")) console.log(JSON.stringify({ files: markdownFiles(root).length, broken }));
  else for (const link of broken) console.log(`${link.file}:${link.line}: ${link.target} (${link.why})`);
  process.exit(broken.length === 0 ? 0 : 1);
}
