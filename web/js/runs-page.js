// The runs page: one stream gives every row, then each change of one.
import { listen } from "./common.js";
import { RunsTable } from "./runs-table.js";

let table = null;
let pending = [];
const filter = document.getElementById("filter");
const stateFilter = document.getElementById("state-filter");
const applyFilter = () => table?.setFilter(filter.value, stateFilter.value);
filter.addEventListener("input", applyFilter);
stateFilter.addEventListener("change", applyFilter);

listen("/api/runs/stream", {
  snapshot({ projects, rows }) {
    document.getElementById("projects").textContent = projects.map((p) => p.dir).join(" · ");
    // A reconnect brings a fresh snapshot: it replaces every row.
    if (table) table.rows.clear();
    else table = new RunsTable(projects);
    table.onRender = () => {
      // For tests and the first-paint benchmark: rows are in the DOM.
      if (!document.body.dataset.painted) {
        document.body.dataset.painted = "1";
        performance.mark("runs-painted");
      }
    };
    table.update([...rows, ...pending]);
    pending = [];
    applyFilter();
  },
  row(row) {
    if (table) table.update([row]);
    else pending.push(row);
  },
});

// Ages move on without any event: redraw the visible window once a minute (no request is made).
setInterval(() => table?.schedule(false), 60_000);
