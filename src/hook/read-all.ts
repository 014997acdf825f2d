// Reads a whole input stream (the hook's JSON, or --stdin arguments), giving up after a time limit.
import type { Readable } from "node:stream";

/** The stream's whole content as UTF-8; rejects (and stops reading) when it has not ended within `timeoutMs`. */
export async function readAll(stream: Readable, timeoutMs: number): Promise<string> {
  const chunks: Buffer[] = [];
  const reading = (async () => {
    for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  })();
  // Once timed out, the destroyed stream makes `reading` reject; nobody waits for it any more.
  reading.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // An open stdin would keep the process alive after the answer: stop reading it.
      stream.destroy();
      reject(new Error(`no end of input on stdin within ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
  try {
    await Promise.race([reading, timeout]);
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
