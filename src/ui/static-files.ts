// The page's files, shipped in the package's web/ folder and read once at start: nothing a URL names
// is ever joined to a path.
import { readdirSync, readFileSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the page's files are, from dist/src/ui (and from src/ui when run from source). */
export const WEB_DIR = fileURLToPath(new URL("../../../web", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** One servable file. */
export interface WebFile {
  type: string;
  body: Buffer;
}

/** Every file under `dir` by its URL path (`/assets/app.css`), and the HTML pages by name. */
export function loadWebFiles(dir: string = WEB_DIR): { assets: Map<string, WebFile>; pages: Map<string, string> } {
  const assets = new Map<string, WebFile>();
  const pages = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      const type = TYPES[extname(entry.name)];
      if (!entry.isFile() || !type) continue;
      if (extname(entry.name) === ".html") pages.set(entry.name, readFileSync(path, "utf8"));
      else assets.set(`/assets/${relative(dir, path).split(sep).join("/")}`, { type, body: readFileSync(path) });
    }
  };
  walk(dir);
  return { assets, pages };
}

/** A page with the CSRF token filled in (in a meta tag: the policy allows no inline script). */
export function fillPage(html: string, csrf: string): string {
  return html.replace("{{csrf}}", csrf);
}
