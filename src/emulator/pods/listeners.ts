/**
 * What a running emulated pod exposes on 127.0.0.1: an SSH listener that answers the SSH
 * identification banner (RFC 4253 4.2: `SSH-2.0-<software>\r\n`) and then closes, enough for a
 * client that waits for sshd to be up; and one small HTTP server per `<port>/http` entry, answering
 * 200 to every request, standing in for the service's HTTP proxy to that port.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";

/** The identification line the emulated sshd sends first. */
export const SSH_BANNER = "SSH-2.0-OpenSSH_9.6 runpod-emulator\r\n";

/** One listener and how to close it (with every connection it holds). */
export interface PodListener {
  port: number;
  close(): Promise<void>;
}

async function listen(server: TcpServer | HttpServer, sockets: Set<Socket>): Promise<PodListener> {
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  server.unref();
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An SSH listener: sends {@link SSH_BANNER} to each connection and closes it after the peer's line. */
export function sshListener(): Promise<PodListener> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    socket.on("error", () => socket.destroy());
    socket.write(SSH_BANNER);
    socket.once("data", () => socket.end());
  });
  return listen(server, sockets);
}

/** The HTTP server behind a pod's `<port>/http`: 200 with a short text to every request. */
export function httpListener(podId: string, privatePort: number): Promise<PodListener> {
  const sockets = new Set<Socket>();
  const server = createHttpServer((request, reply) => {
    request.resume();
    reply.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    reply.end(`pod ${podId} port ${privatePort}: ${request.method} ${request.url}\n`);
  });
  return listen(server, sockets);
}
