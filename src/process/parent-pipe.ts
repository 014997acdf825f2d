// A child run of `--parallel` holds a pipe from its parent on stdin: when the parent dies (even by
// SIGKILL) the pipe closes, and the child ends as if it had been sent SIGTERM.

/** Watches stdin for the parent's end; `onGone` runs once when it closes. Returns the disposer. */
export function watchParentPipe(onGone: () => void): () => void {
  let done = false;
  const gone = () => {
    if (done) return;
    done = true;
    onGone();
  };
  const stdin = process.stdin;
  stdin.on("end", gone);
  stdin.on("close", gone);
  stdin.on("error", gone);
  stdin.on("data", () => undefined);
  stdin.resume();
  return () => {
    done = true;
    stdin.removeListener("end", gone);
    stdin.removeListener("close", gone);
    stdin.removeListener("error", gone);
    stdin.destroy();
  };
}
