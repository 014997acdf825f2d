// The sandbox's egress proxy on its unix socket: CONNECT tunnels to allowed hosts only, refusals reported.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { startEgressProxy, type Denied, type EgressProxy } from "../../src/sandbox/egress-proxy.js";

/** Sends `request` over the proxy's socket and collects what comes back until the peer closes (or 2 s). */
function exchange(socket: string, request: string, then = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connect(socket);
    let got = "";
    const timer = setTimeout(() => client.destroy(), 2000);
    client.on("connect", () => client.write(request));
    client.on("data", (chunk: Buffer) => {
      got += chunk.toString("utf8");
      if (then !== "" && got.includes("200 Connection Established") && !got.includes("echo:")) client.write(then);
      if (got.includes("echo:")) client.end();
    });
    client.on("close", () => (clearTimeout(timer), resolve(got)));
    client.on("error", reject);
  });
}

describe("egress proxy", () => {
  let echo: Server;
  let proxy: EgressProxy;
  const denied: Denied[] = [];
  before(async () => {
    echo = createServer((socket) =>
      socket.on("data", (chunk: Buffer) => socket.write(`echo:${chunk.toString("utf8")}`)),
    );
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    proxy = await startEgressProxy([`127.0.0.1:${(echo.address() as AddressInfo).port}`], (refused) =>
      denied.push(refused),
    );
  });
  after(async () => {
    await proxy.close();
    echo.close();
  });

  test("a CONNECT to an allowed host:port is tunnelled both ways", async () => {
    const port = (echo.address() as AddressInfo).port;
    const got = await exchange(
      proxy.socket,
      `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
      "ping",
    );
    assert.match(got, /^HTTP\/1\.1 200 Connection Established/);
    assert.match(got, /echo:ping/);
    assert.deepEqual(denied, []);
  });

  test("a CONNECT anywhere else is refused with 403 and reported with its host and port", async () => {
    const got = await exchange(proxy.socket, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    assert.match(got, /^HTTP\/1\.1 403/);
    assert.deepEqual(denied, [{ host: "example.com", port: 443 }]);
  });
});
