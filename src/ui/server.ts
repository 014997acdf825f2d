// The dashboard's HTTP server (node:http): pages, assets, live streams and the run buttons, each behind the guard.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isAction, runAction } from "./actions.js";
import { checkRequest, tokenCookie, type Guard } from "./guard.js";
import { findRun, type Project } from "./projects.js";
import { openEventStream, send, sendJson, sendText } from "./respond.js";
import { streamRun } from "./run-stream.js";
import { RunsHub } from "./runs-hub.js";
import { spendChartData } from "./spend-chart-data.js";
import type { SpendBy } from "../spend/spend-report.js";
import { fillPage, loadWebFiles } from "./static-files.js";

/** A started dashboard. */
export interface Dashboard {
  server: Server;
  hub: RunsHub;
  close(): Promise<void>;
}

/** Room for the largest answer `ralph answer` takes (16 KB), JSON-escaped. */
const MAX_BODY = 128 * 1024;
const RUN_PAGE = /^\/run\/([^/]+)\/([^/]+)$/;
const RUN_API = /^\/api\/run\/([^/]+)\/([^/]+)\/([a-z-]+)$/;

function readBody(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  return new Promise((resolve) => {
    let text = "";
    let tooLarge = false;
    req.setEncoding("utf8");
    // A body over the limit is read to its end and dropped, so the refusal can still be answered.
    req.on("data", (chunk: string) => {
      if (tooLarge) return;
      text += chunk;
      if (text.length > MAX_BODY) [tooLarge, text] = [true, ""];
    });
    req.on("end", () => {
      if (tooLarge) return resolve(null);
      try {
        const value: unknown = text ? JSON.parse(text) : {};
        resolve(
          value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null,
        );
      } catch {
        resolve(null);
      }
    });
    req.on("error", () => resolve(null));
  });
}

/** Serves `projects` with `guard` on an http.Server that is not yet listening. */
export function createDashboard(projects: Project[], guard: Guard): Dashboard {
  const hub = new RunsHub(projects);
  const { assets, pages } = loadWebFiles();
  const page = (res: ServerResponse, name: string) =>
    send(res, 200, "text/html; charset=utf-8", fillPage(pages.get(name) ?? "", guard.csrf));
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    const verdict = checkRequest(guard, req, url);
    if (verdict.kind === "refused") return sendText(res, verdict.status, verdict.message);
    if (verdict.kind === "set-cookie") {
      // The token leaves the address bar (and history) once it is in the cookie.
      res.writeHead(303, {
        Location: url.pathname,
        "Set-Cookie": tokenCookie(guard),
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
      });
      return res.end();
    }
    const path = url.pathname;
    if (req.method === "POST") {
      const match = RUN_API.exec(path);
      const ref = match ? findRun(projects, match[1] ?? "", match[2] ?? "") : null;
      const action = match?.[3] ?? "";
      if (!ref || !isAction(action)) return sendJson(res, 404, { message: "no such run or action" });
      const body = await readBody(req);
      if (!body) return sendJson(res, 400, { message: "the request body must be a JSON object of at most 128 KB" });
      const result = await runAction(ref, action, body);
      return sendJson(res, result.status, { message: result.message });
    }
    if (path === "/") return page(res, "index.html");
    const runPage = RUN_PAGE.exec(path);
    if (runPage)
      return findRun(projects, runPage[1] ?? "", runPage[2] ?? "")
        ? page(res, "run.html")
        : sendText(res, 404, "no such run");
    const asset = assets.get(path);
    if (asset) return send(res, 200, asset.type, asset.body);
    if (path === "/api/runs/stream") {
      const sendEvent = openEventStream(res);
      sendEvent("snapshot", { projects: projects.map(({ key, name, dir }) => ({ key, name, dir })), rows: hub.all() });
      const unsubscribe = hub.subscribe((row) => sendEvent("row", row));
      return res.on("close", unsubscribe);
    }
    if (path === "/api/spend") {
      // The spend ledger's sums for the projects shown: the chart of `ralph spend`.
      const by = url.searchParams.get("by") ?? "day";
      const days = Number(url.searchParams.get("days") ?? "14");
      if (!["day", "run", "agent", "model"].includes(by) || !Number.isInteger(days) || days < 1 || days > 366)
        return sendJson(res, 400, { message: "by: day, run, agent or model; days: 1 to 366" });
      return sendJson(res, 200, spendChartData(projects, by as SpendBy, days, process.env));
    }
    const runApi = RUN_API.exec(path);
    if (runApi && runApi[3] === "stream") {
      const ref = findRun(projects, runApi[1] ?? "", runApi[2] ?? "");
      return ref ? streamRun(res, ref, hub) : sendText(res, 404, "no such run");
    }
    return sendText(res, 404, "not found");
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendText(res, 500, `internal error: ${(error as Error).message}`);
      else res.destroy();
    });
  });
  return {
    server,
    hub,
    close: () =>
      new Promise((resolve) => {
        hub.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
