// Shared by both pages: DOM building, number formats, the live stream and the POST helper.

/** An element with attributes and children (strings become text nodes: nothing is parsed as HTML). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(key, String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** US dollars with four decimals, as the CLI prints them. */
export const money = (usd) => `$${Number(usd ?? 0).toFixed(4)}`;

/** `3/10`, `3/∞` or `3/?`, as `ralph list` prints it. */
export const iterationText = (row) =>
  // A --parallel parent counts child runs, not iterations of a cap it does not have (as `ralph list` says).
  row.parallel
    ? `${row.iteration} run${row.iteration === 1 ? "" : "s"}`
    : `${row.iteration}/${row.max_iterations === 0 ? "∞" : (row.max_iterations ?? "?")}`;

/** A token count shortened: 950, 12.3k, 4.1M. */
export function tokensText(count) {
  if (!count) return "0";
  if (count < 1000) return String(count);
  if (count < 1e6) return `${(count / 1000).toFixed(1)}k`;
  return `${(count / 1e6).toFixed(1)}M`;
}

/** Seconds since `iso` as `ralph list` prints ages (45s, 12m, 5h, 3d). */
export function ageText(iso, now = Date.now()) {
  const started = Date.parse(iso ?? "");
  if (!Number.isFinite(started)) return "-";
  const seconds = Math.max(0, Math.round((now - started) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

/** The icon and tone of each state, as a CI run page shows them: one glance tells how a run stands. */
const STATE_LOOK = {
  running: ["●", "running"],
  starting: ["●", "running"],
  paused: ["❚❚", "waiting"],
  waiting: ["◷", "waiting"],
  needs_human: ["?", "waiting"],
  DONE: ["✓", "good"],
  NO_WORK: ["✓", "good"],
  STOPPED: ["■", "neutral"],
  DRY_RUN: ["○", "neutral"],
  INTERRUPTED: ["■", "neutral"],
  MAX_ITERATIONS: ["◼", "limit"],
  BUDGET_EXCEEDED: ["◼", "limit"],
  RUNTIME_EXCEEDED: ["◼", "limit"],
  FAILED: ["✗", "bad"],
  STALLED: ["✗", "bad"],
  stale: ["○", "neutral"],
};

/** What `foreign` means and what to do, as `ralph status` says it (src/control/foreign-run.ts). */
export const FOREIGN_TEXT =
  "ralph has no record of starting this run: it was started with another HOME or XDG_STATE_HOME, or copied here. To see and control it, run ralph with that HOME or XDG_STATE_HOME; if it is not yours, remove its run directory.";

/** A state as icon and word, with data-tone for its colour; a dry run says so, and a foreign run why it is one. */
export function stateBadge(state, dryRun = false) {
  const [icon, tone] = STATE_LOOK[state] ?? ["•", "neutral"];
  const marked = dryRun && state !== "DRY_RUN";
  const title = dryRun
    ? `${state} (dry run: no agent was started)`
    : state === "foreign"
      ? `foreign: ${FOREIGN_TEXT}`
      : state;
  return el(
    "span",
    { class: "badge", "data-tone": tone, title },
    el("span", { class: "icon", "aria-hidden": "true" }, icon),
    ` ${state}`,
    marked ? el("span", { class: "dry" }, " dry run") : null,
    state === "foreign" ? el("span", { class: "dry" }, " (no record: another HOME?)") : null,
  );
}

/** Whether a state is one a run ends in (an exit reason). */
export const isEnded = (state) => /^[A-Z_]+$/.test(state);

/**
 * Listens to a server-sent event stream; `handlers` maps event names to functions of the parsed data.
 * The connection indicator says whether the stream is up (the browser reconnects by itself).
 */
export function listen(path, handlers, showsConnection = true) {
  const source = new EventSource(path);
  const indicator = showsConnection ? document.getElementById("connection") : null;
  const show = (state, text) => {
    if (!indicator) return;
    indicator.dataset.state = state;
    indicator.textContent = text;
  };
  source.onopen = () => show("live", "live");
  source.onerror = () => show("down", "reconnecting…");
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (message) => handle(JSON.parse(message.data)));
  }
  return source;
}

/** POSTs `body` as JSON with the page's CSRF token; resolves to {ok, status, message}. */
export async function post(path, body = {}) {
  const csrf = document.querySelector('meta[name="csrf"]')?.getAttribute("content") ?? "";
  try {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Ralph-CSRF": csrf },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const text = await response.text();
    let message = text;
    try {
      message = JSON.parse(text).message ?? text;
    } catch {
      // a plain-text refusal
    }
    return { ok: response.ok, status: response.status, message };
  } catch (error) {
    return { ok: false, status: 0, message: String(error) };
  }
}
