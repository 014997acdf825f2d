// The agent's output split by iteration, from the "── iteration N ──" lines the live view prints.

const HEADER = /^── iteration (\d+)\b/;

/** Iteration number → its lines (header excluded), for the lines the page keeps. */
export function outputByIteration(lines) {
  const byIteration = new Map();
  let current = null;
  for (const line of lines) {
    const header = HEADER.exec(line);
    if (header) {
      current = Number(header[1]);
      byIteration.set(current, []);
    } else if (current !== null) byIteration.get(current).push(line);
  }
  return byIteration;
}
