/**
 * A pod's run on the emulator's clock: `PROVISIONING`, then `STARTING` after half of `podStartMs`,
 * then `RUNNING` after the other half with its listeners open (or `ERROR` for an image containing
 * `unpullable`, or ports that cannot open). Each transition bumps the pod's `run`, so timers and
 * listeners of an older run do nothing.
 */
import type { PodStatus } from "../../wire/pods";
import type { Clock } from "../clock";
import type { StoredPod } from "./records";
import { closeAll, openRuntime, type PodRuntime, sshBlock } from "./runtime";

/** What a run does to the store: status changes, log lines, compute given back. */
export interface PodRunHooks {
  set(stored: StoredPod, status: PodStatus): void;
  log(stored: StoredPod, source: "system" | "container", line: string): void;
  /** Gives back the compute the pod holds. */
  release(stored: StoredPod): void;
  /** True while the store still has the pod. */
  exists(id: string): boolean;
}

/** Starts and stops pods' runs. */
export class PodLifecycle {
  readonly #clock: Clock;
  readonly #startMs: number;
  readonly #hooks: PodRunHooks;

  constructor(clock: Clock, startMs: number, hooks: PodRunHooks) {
    this.#clock = clock;
    this.#startMs = startMs;
    this.#hooks = hooks;
  }

  /** Runs the start steps from `from` (PROVISIONING or STARTING) to RUNNING or ERROR. */
  boot(stored: StoredPod, from: "PROVISIONING" | "STARTING" = "PROVISIONING"): void {
    const run = ++stored.run;
    this.#hooks.set(stored, from);
    const half = Math.floor(this.#startMs / 2);
    const toStarting = () => {
      if (stored.run !== run) return;
      this.#hooks.set(stored, "STARTING");
      this.#hooks.log(stored, "system", `pulling image ${stored.pod.image}`);
      stored.timers.push(this.#clock.setTimeout(finish, this.#startMs - half));
    };
    const finish = () => {
      if (stored.run !== run) return;
      stored.timers = [];
      if ((stored.pod.image ?? "").includes("unpullable")) {
        this.#hooks.log(
          stored,
          "system",
          `error pulling image ${stored.pod.image}: Error response from daemon: pull access denied for ${stored.pod.image}, repository does not exist or may require 'docker login'`,
        );
        this.#hooks.release(stored);
        this.#hooks.set(stored, "ERROR");
        return;
      }
      void this.#running(stored, run);
    };
    stored.timers.push(
      from === "PROVISIONING"
        ? this.#clock.setTimeout(toStarting, half)
        : this.#clock.setTimeout(finish, this.#startMs - half),
    );
  }

  async #running(stored: StoredPod, run: number): Promise<void> {
    const { pod } = stored;
    let runtime: PodRuntime;
    try {
      runtime = await openRuntime(pod, stored.sshKeys.length > 0);
    } catch (err) {
      if (stored.run === run) {
        this.#hooks.log(stored, "system", `could not open the pod's ports: ${(err as Error).message}`);
        this.#hooks.release(stored);
        this.#hooks.set(stored, "ERROR");
      }
      return;
    }
    if (stored.run !== run || !this.#hooks.exists(pod.id)) {
      await closeAll(runtime.listeners);
      return;
    }
    const { ssh, ports: runtimePorts } = runtime;
    stored.listeners = runtime.listeners;
    pod.startedAt = new Date(this.#clock.now()).toISOString();
    pod.runtime = { uptime: 0, ports: runtimePorts };
    if (ssh) pod.ssh = sshBlock(pod, ssh.port);
    this.#hooks.set(stored, "RUNNING");
    if (ssh) this.#hooks.log(stored, "container", `sshd listening on port 22 (127.0.0.1:${ssh.port})`);
    for (const p of runtimePorts.filter((r) => r.type === "http")) {
      this.#hooks.log(stored, "container", `serving http on port ${p.private} (127.0.0.1:${p.public})`);
    }
    this.#hooks.log(stored, "container", "container started");
  }

  /** Ends the current run: cancels its timers and closes its listeners. */
  stopRun(stored: StoredPod): Promise<void> {
    stored.run++;
    for (const t of stored.timers) this.#clock.clearTimeout(t);
    stored.timers = [];
    const listeners = stored.listeners;
    stored.listeners = [];
    stored.pod.ssh = { proxy: null, direct: null };
    stored.pod.runtime = null;
    return closeAll(listeners);
  }
}
