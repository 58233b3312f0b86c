/**
 * The baseline of the emulator-throughput row: a bare `node:http` server on 127.0.0.1 that
 * answers every request with one fixed JSON body (argv[2]) and status 200, nothing else: no
 * routing, no auth, no validation. When listening it prints `{"port":N}` on stdout; it exits on
 * SIGTERM or SIGINT.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

const body = Buffer.from(process.argv[2] ?? "{}");
const server = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(200, {
      "content-type": "application/json; charset=utf-8",
      "content-length": body.length,
    });
    response.end(body);
  });
});
server.keepAliveTimeout = 10_000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
