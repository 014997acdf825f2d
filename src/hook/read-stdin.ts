// Reads the whole of standard input through its file descriptor. Building `process.stdin` for a pipe or a
// socket loads and sets up Node's stream and socket modules: the Stop hook, which Claude Code starts at every
// stop of every session, would pay for them at each call to read one short line of JSON.
import { fstatSync, read } from "node:fs";
import { readAllBytes } from "./read-all.js";

const CHUNK = 64 * 1024;

/** readStdin's time limit passed: a read of stdin still waits, and keeps the process alive until the input ends. */
export class StdinTimeout extends Error {}

/** Whether standard input is a terminal (checked through `process.stdin` only for a character device). */
export function stdinIsTerminal(): boolean {
  try {
    if (!fstatSync(0).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return process.stdin.isTTY === true;
}

/**
 * Standard input's whole content as UTF-8; rejects with a StdinTimeout when it has not ended within
 * `timeoutMs`. A read already waiting for input cannot be taken back, not even by process.exit() (Node
 * waits for its thread pool): after a StdinTimeout the process lives on until the input ends, unless its
 * caller ends it. A descriptor another process made non-blocking is read as a stream.
 */
export function readStdin(timeoutMs: number): Promise<string> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const timer = setTimeout(
      () => settle(() => reject(new StdinTimeout(`no end of input on stdin within ${timeoutMs / 1000} s`))),
      timeoutMs,
    );
    const buffer = Buffer.allocUnsafe(CHUNK);
    const next = () =>
      read(0, buffer, 0, CHUNK, null, (error, bytes) => {
        if (settled) return;
        if (error?.code === "EAGAIN") {
          const rest = readAllBytes(process.stdin, Math.max(1, timeoutMs - (Date.now() - started)));
          settle(() => resolve(rest.then((bytes) => Buffer.concat([...chunks, bytes]).toString("utf8"))));
        } else if (error) settle(() => reject(error));
        else if (bytes === 0) settle(() => resolve(Buffer.concat(chunks).toString("utf8")));
        else {
          chunks.push(Buffer.from(buffer.subarray(0, bytes)));
          next();
        }
      });
    next();
  });
}
