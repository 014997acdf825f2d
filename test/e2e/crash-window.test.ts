// A runner SIGKILLed at any moment of its start leaves its run either invisible or continuable (half the kill points; the other half in crash-window-more).
import { test } from "node:test";
import { tempProjects } from "../helpers/cli.js";
import { crashAtEach } from "../fixtures/crash-window.js";

const project = tempProjects("ralph-crash-");

test("SIGKILL after each step of creating a run: the run is absent, or listed and continuable", async () => {
  await crashAtEach([1, 3, 5, 7, 10, 14, 20, 30], project);
});
