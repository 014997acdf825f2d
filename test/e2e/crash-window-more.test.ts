// A runner SIGKILLed at any moment of its start leaves its run either invisible or continuable (the other half of the kill points).
import { test } from "node:test";
import { tempProjects } from "../helpers/cli.js";
import { crashAtEach } from "../fixtures/crash-window.js";

const project = tempProjects("ralph-crash-");

test("SIGKILL after each of the other steps of creating a run: the run is absent, or listed and continuable", async () => {
  await crashAtEach([2, 4, 6, 8, 12, 17, 24], project);
});
