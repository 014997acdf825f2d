// The runs page's spend panel: the last 14 days of the projects shown, by day, from ralph's spend ledger.
import { spendByDayChart } from "./charts.js";

async function showSpend() {
  const panel = document.getElementById("spend-chart");
  const total = document.getElementById("spend-total");
  if (!panel) return;
  try {
    const response = await fetch("/api/spend?by=day&days=14", { credentials: "same-origin" });
    if (!response.ok) throw new Error(`${response.status}`);
    const data = await response.json();
    panel.replaceChildren(spendByDayChart(data));
    total.textContent = `${data.total.cost_text} · tokens ${data.total.tokens_text}`;
  } catch (error) {
    total.textContent = `spend not available (${error.message})`;
  }
}

showSpend();
// New calls come with runs: the panel is read again once a minute.
setInterval(showSpend, 60_000);
