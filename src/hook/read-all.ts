// Reads a whole input stream (the hook's JSON, or --stdin arguments), giving up after a time limit.
import type { Readable } from "node:stream";

/** The stream's whole content as UTF-8; rejects (and stops reading) when it has not ended within `timeoutMs`. */
export async function readAll(stream: Readable, timeoutMs: number): Promise<string> {
  return (await readAllBytes(stream, timeoutMs)).toString("utf8");
}

/** The stream's whole content; rejects (and stops reading) when it has not ended within `timeoutMs`. */
export function readAllBytes(stream: Readable, timeoutMs: number): Promise<Buffer> {
  // Plain events rather than `for await`: the async iterator is machinery Node builds on first use (the
  // Stop hook comes here for a stdin another process made non-blocking, see read-stdin.ts).
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer | string) => chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    const settle = (error: Error | null) => {
      clearTimeout(timer);
      stream.off("data", onData).off("end", onEnd).off("error", settle).off("close", onClose);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const onEnd = () => settle(null);
    const onClose = () => settle(new Error("the input closed before its end"));
    const timer = setTimeout(() => {
      // An open stdin would keep the process alive after the answer: stop reading it.
      stream.destroy();
      settle(new Error(`no end of input on stdin within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    stream.on("data", onData).once("end", onEnd).once("error", settle).once("close", onClose);
  });
}
