// A SHA-256 digest (hex) for naming many records at once (a listing of thousands of runs): node:crypto's
// one-call digest where Node has it (20.12 and later), else a Hash object a call; for a few names the
// plain-JavaScript digest, which costs nothing to load.
import { requireBuiltin } from "./require-builtin.js";
import { sha256Hex } from "./sha256.js";

/** A digest function for `count` names: node:crypto's above a few, sha256Hex's below. */
export function sha256ForMany(count: number): (text: string) => string {
  if (count <= 32) return sha256Hex;
  const crypto = requireBuiltin("node:crypto") as typeof import("node:crypto");
  // `hash` is not in every Node 20.
  const oneCall = (crypto as { hash?: (algorithm: string, data: string) => string }).hash;
  return typeof oneCall === "function"
    ? (text) => oneCall("sha256", text)
    : (text) => crypto.createHash("sha256").update(text).digest("hex");
}
