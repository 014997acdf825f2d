// The runs table: sorting, filtering and windowed rows, so that 10,000 runs cost no more than a screenful.
import { ageText, el, isEnded, iterationText, stateBadge } from "./common.js";

const ROW_HEIGHT = 28;
const OVERSCAN = 10;

/** Columns: header, the value sorted on, and the cell text. */
const COLUMNS = [
  { key: "project", label: "project", sort: (r, t) => t.projectName(r), text: (r, t) => t.projectName(r), multi: true },
  // A --parallel child is listed right under its parent (whatever the order) and marked as its child.
  { key: "id", label: "run", sort: (r) => r.id, text: (r) => (r.parent ? `↳ ${r.id}` : r.id) },
  {
    key: "state",
    label: "state",
    sort: (r) => r.state,
    text: (r) => r.state,
    node: (r) => stateBadge(r.state, r.dry_run === true),
  },
  { key: "iteration", label: "iteration", sort: (r) => r.iteration, text: iterationText },
  { key: "spend", label: "spend", sort: (r) => r.cost_usd ?? -1, text: (r) => r.spend_text?.cost_cell ?? "-" },
  {
    key: "tokens",
    label: "tokens (in/out/cache read/cache write, total)",
    sort: (r) => r.tokens?.total ?? 0,
    text: (r) => r.spend_text?.tokens_cell ?? "-",
  },
  { key: "age", label: "age", sort: (r) => -(Date.parse(r.started_at ?? "") || 0), text: (r) => ageText(r.started_at) },
  { key: "agent", label: "agent", sort: (r) => r.agent ?? "", text: (r) => r.agent ?? "-" },
  { key: "branch", label: "branch", sort: (r) => r.branch ?? "", text: (r) => r.branch ?? "" },
  { key: "reason", label: "reason", sort: (r) => r.reason ?? "", text: (r) => r.reason ?? "" },
  { key: "question", label: "open question", sort: (r) => r.question ?? "", text: (r) => r.question ?? "" },
];

/**
 * The rows in their sorted order, each --parallel child moved right under its parent (the children in the same
 * order among themselves); a child whose parent is filtered out stays where it sorted.
 */
export function underParents(rows) {
  const shown = new Set(rows.map((row) => `${row.project}/${row.id}`));
  const byParent = new Map();
  for (const row of rows) {
    if (!row.parent || !shown.has(`${row.project}/${row.parent}`)) continue;
    const key = `${row.project}/${row.parent}`;
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(row);
  }
  const out = [];
  const place = (row, depth) => {
    out.push(row);
    // A resolve run of a child's merge is a child too: at most a parent's depth of nesting is followed.
    if (depth < 4) for (const child of byParent.get(`${row.project}/${row.id}`) ?? []) place(child, depth + 1);
  };
  for (const row of rows) if (!row.parent || !shown.has(`${row.project}/${row.parent}`)) place(row, 0);
  return out;
}

/** A table bound to the page's #head, #viewport, #spacer and #rows elements. */
export class RunsTable {
  constructor(projects) {
    this.rows = new Map();
    this.projects = new Map(projects.map((p) => [p.key, p]));
    this.columns = COLUMNS.filter((c) => !c.multi || projects.length > 1);
    // Newest first, as a CI system lists its runs: the age column sorts on the start time.
    this.sortKey = "age";
    this.descending = false;
    this.query = "";
    this.stateFilter = "";
    this.visible = [];
    this.dirty = true;
    this.viewport = document.getElementById("viewport");
    this.spacer = document.getElementById("spacer");
    this.body = document.getElementById("rows");
    this.head = document.getElementById("head");
    document.getElementById("table").dataset.columns = String(this.columns.length);
    this.renderHead();
    this.viewport.addEventListener("scroll", () => this.schedule(false));
    window.addEventListener("resize", () => this.schedule(false));
  }

  projectName(row) {
    return this.projects.get(row.project)?.name ?? row.project;
  }

  /** Adds or replaces rows, then redraws on the next frame. */
  update(rows) {
    for (const row of rows) this.rows.set(`${row.project}/${row.id}`, row);
    this.schedule(true);
  }

  setFilter(query, state) {
    this.query = query.trim().toLowerCase();
    this.stateFilter = state;
    this.schedule(true);
  }

  sortBy(key) {
    this.descending = this.sortKey === key ? !this.descending : key === "id" || key === "spend" || key === "tokens";
    this.sortKey = key;
    this.renderHead();
    this.schedule(true);
  }

  schedule(dirty) {
    this.dirty ||= dirty;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  matches(row) {
    const state = this.stateFilter;
    if (state === "active" && !row.active) return false;
    if (state === "ended" && !isEnded(row.state)) return false;
    if (state === "stale" && row.state !== "stale") return false;
    if (state === "question" && !row.question) return false;
    if (!this.query) return true;
    const haystack =
      `${row.id} ${row.state} ${row.agent ?? ""} ${row.branch ?? ""} ${row.parent ?? ""} ${row.reason ?? ""} ${row.question ?? ""} ${this.projectName(row)}`.toLowerCase();
    return haystack.includes(this.query);
  }

  /** Recomputes the filtered, sorted list when rows or order changed, then draws the visible window. */
  render() {
    if (this.dirty) {
      const column = this.columns.find((c) => c.key === this.sortKey) ?? this.columns[0];
      const sign = this.descending ? -1 : 1;
      // Each row's sort key is computed once (a start time is parsed once, not at every comparison).
      const keyed = [];
      for (const row of this.rows.values()) if (this.matches(row)) keyed.push({ key: column.sort(row, this), row });
      keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) * sign);
      this.visible = underParents(keyed.map((entry) => entry.row));
      this.spacer.style.height = `${this.visible.length * ROW_HEIGHT}px`;
      document.getElementById("count").textContent = `${this.visible.length} of ${this.rows.size} runs`;
      this.dirty = false;
    }
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const count = Math.ceil(this.viewport.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
    const slice = this.visible.slice(first, first + count);
    this.body.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    this.body.replaceChildren(...slice.map((row) => this.renderRow(row)));
    this.onRender?.();
  }

  renderRow(row) {
    const link = el("a", {
      class: "row",
      role: "row",
      href: `/run/${encodeURIComponent(row.project)}/${encodeURIComponent(row.id)}`,
      "data-run": row.id,
      "data-state": row.state,
    });
    for (const column of this.columns) {
      const text = column.text(row, this);
      link.append(
        el("span", { class: `cell ${column.key}`, role: "cell", title: text }, column.node ? column.node(row) : text),
      );
    }
    return link;
  }

  renderHead() {
    this.head.replaceChildren(
      ...this.columns.map((column) => {
        const arrow = column.key === this.sortKey ? (this.descending ? " ▾" : " ▴") : "";
        const button = el(
          "button",
          {
            type: "button",
            class: `cell ${column.key}`,
            role: "columnheader",
            "aria-sort": arrow ? (this.descending ? "descending" : "ascending") : "none",
          },
          column.label + arrow,
        );
        button.addEventListener("click", () => this.sortBy(column.key));
        return button;
      }),
    );
  }
}
