/**
 * What a RUNNING pod serves: an SSH listener when it has keys, an HTTP server per `<port>/http`,
 * and the `runtime.ports` and `ssh` blocks that describe them.
 */
import { randomBytes } from "node:crypto";
import type { Pod } from "../../wire/pods";
import { httpListener, type PodListener, sshListener } from "./listeners";

type RuntimePorts = NonNullable<NonNullable<Pod["runtime"]>["ports"]>;

/** The listeners a pod's run opened, and what they are. */
export interface PodRuntime {
  listeners: PodListener[];
  ports: RuntimePorts;
  ssh: PodListener | undefined;
}

/**
 * Opens the pod's listeners: SSH when `withSsh`, one HTTP server per `<port>/http`, `22/tcp`
 * on the SSH listener. When one fails to open, the others are closed and the error is thrown.
 */
export async function openRuntime(pod: Pod, withSsh: boolean): Promise<PodRuntime> {
  const listeners: PodListener[] = [];
  const ports: RuntimePorts = [];
  let ssh: PodListener | undefined;
  try {
    if (withSsh) {
      ssh = await sshListener();
      listeners.push(ssh);
    }
    for (const entry of pod.ports ?? []) {
      const [portText, protocol] = entry.split("/");
      const privatePort = Number(portText);
      if (protocol === "http") {
        const listener = await httpListener(pod.id, privatePort);
        listeners.push(listener);
        ports.push({ private: privatePort, public: listener.port, type: "http", ip: "127.0.0.1" });
      } else if (privatePort === 22 && ssh) {
        ports.push({ private: 22, public: ssh.port, type: "tcp", ip: "127.0.0.1" });
      }
    }
  } catch (err) {
    await closeAll(listeners);
    throw err;
  }
  return { listeners, ports, ssh };
}

/** Closes every listener. */
export async function closeAll(listeners: readonly PodListener[]): Promise<void> {
  await Promise.all(listeners.map((l) => l.close()));
}

/** The pod's `ssh` block for an SSH listener on `port`: `proxy` always, `direct` when `22/tcp` is in `ports`. */
export function sshBlock(pod: Pod, port: number): NonNullable<Pod["ssh"]> {
  const proxyUser = `${pod.id}-${randomBytes(4).toString("hex")}`;
  return {
    proxy: { host: "127.0.0.1", port, username: proxyUser, command: `ssh ${proxyUser}@127.0.0.1 -p ${port}` },
    direct: (pod.ports ?? []).includes("22/tcp")
      ? { host: "127.0.0.1", port, username: "root", command: `ssh root@127.0.0.1 -p ${port}` }
      : null,
  };
}
