/**
 * Waiting for a pod to be usable, as `waitFor` asks: `running` (status RUNNING), `ssh` (its SSH
 * endpoint accepts a TCP connection and answers an `SSH-` banner) or `{ port, path?,
 * expectStatus? }` (its proxied HTTP port answers that status). One read of the pod a second at
 * most, through the client; bounded by `waitTimeoutMs` of the wait's clock (an argument, so a
 * test can replay a pod's statuses and move time by hand).
 */
import * as net from "node:net";
import { NotFoundError, type Pod, type RunpodClient } from "../../client";
import { CANCELLED, type Clock, isCancellation, sleep, systemClock } from "../clock";
import { boundEntry, printable } from "../common/wording";
import type { PodWaitFor } from "./args";

/** Least time between two reads of the pod, in ms. */
export const POLL_INTERVAL_MS = 1000;
/** Longest one SSH or HTTP probe may take, in ms. */
const PROBE_TIMEOUT_MS = 5000;
/**
 * How long the wait keeps reading a pod the service answers 404 for, in ms of the wait's clock
 * from the first 404: right after a create the service may not find its own new pod yet (eventual
 * consistency). Past it (or past `waitTimeoutMs`, whichever comes first) the wait fails.
 */
export const NOT_FOUND_GRACE_MS = 30_000;

/** How a wait ended when the pod did not become usable. */
export interface WaitFailure {
  kind: "failure";
  pod: Pod;
  /** Statuses seen in order (no repeats), each as {@link boundEntry} prints the service's text. */
  history: string[];
  /** What went wrong, one sentence. */
  why: string;
}

export interface WaitOptions {
  client: RunpodClient;
  pod: Pod;
  /** `RUNNING` waits per `waitFor`; `EXITED` until the pod is stopped. */
  wanted: "RUNNING" | "EXITED";
  waitFor: PodWaitFor;
  timeoutMs: number;
  /** Time and timers of the pauses between reads and of the deadline. @default the real clock */
  clock?: Clock;
  /**
   * Ends the wait between two reads when it aborts (the deployment cancelled), as a failure that
   * says so. @default never
   */
  signal?: AbortSignal;
}

/** Waits as {@link WaitOptions} says: the pod when it is usable, else why not. */
export async function waitForPod(options: WaitOptions): Promise<{ kind: "ready"; pod: Pod } | WaitFailure> {
  const { client, wanted, waitFor, timeoutMs } = options;
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  let pod = options.pod;
  const history: string[] = [];
  const started = now();
  let lastProbe = "";
  /** When the reads began answering 404 (undefined while the pod is found). */
  let missingSince: number | undefined;
  if (wanted === "RUNNING" && waitFor === "none") return { kind: "ready", pod };
  for (;;) {
    // The status is the service's text: one printable line in the history and the reason.
    const status = boundEntry(pod.status);
    if (history[history.length - 1] !== status) history.push(status);
    if (wanted === "EXITED") {
      if (pod.status === "EXITED") return { kind: "ready", pod };
      if (pod.status === "ERROR" || pod.status === "TERMINATED") {
        return { kind: "failure", pod, history, why: `it went to ${status} instead of EXITED` };
      }
    } else if (pod.status === "RUNNING") {
      const probe = await probeUsable(
        pod,
        waitFor,
        Math.min(PROBE_TIMEOUT_MS, timeoutMs - (now() - started)),
      );
      if (probe === true) return { kind: "ready", pod };
      lastProbe = probe;
    } else if (pod.status === "ERROR" || pod.status === "EXITED" || pod.status === "TERMINATED") {
      return { kind: "failure", pod, history, why: `it went to ${status} instead of RUNNING` };
    }
    const left = timeoutMs - (now() - started);
    const what = wanted === "EXITED" ? "EXITED" : describeWait(waitFor);
    const standing = `its status is ${status}` + (lastProbe ? ` (${lastProbe})` : "");
    if (left <= 0) {
      return {
        kind: "failure",
        pod,
        history,
        why: `it was not ${what} within waitTimeoutMs (${timeoutMs} ms); ${standing}`,
      };
    }
    try {
      await sleep(clock, Math.min(POLL_INTERVAL_MS, left), options.signal);
      pod = await client.pods.get(pod.id, { signal: options.signal });
      missingSince = undefined;
    } catch (error) {
      if (isCancellation(error, options.signal))
        return { kind: "failure", pod, history, why: `it was not ${what} when ${CANCELLED}; ${standing}` };
      if (!(error instanceof NotFoundError)) throw error;
      missingSince ??= now();
      const missingMs = now() - missingSince;
      if (missingMs >= NOT_FOUND_GRACE_MS) {
        const why = `the service answered 404 for it for ${Math.round(missingMs / 1000)} s (it may have been terminated)`;
        return { kind: "failure", pod, history, why };
      }
    }
  }
}

/** `RUNNING`, `RUNNING with SSH answering`, `RUNNING with port 8888 answering 200`. */
export function describeWait(waitFor: PodWaitFor): string {
  if (waitFor === "ssh") return "RUNNING with its SSH endpoint answering";
  if (typeof waitFor === "object")
    return `RUNNING with port ${waitFor.port} answering ${waitFor.expectStatus ?? 200}`;
  return "RUNNING";
}

/** True when the running pod is usable as `waitFor` says, else what the probe found. */
export async function probeUsable(pod: Pod, waitFor: PodWaitFor, timeoutMs: number): Promise<true | string> {
  if (waitFor === "running" || waitFor === "none") return true;
  const budget = Math.max(100, timeoutMs);
  if (waitFor === "ssh") {
    const endpoint = pod.ssh?.direct ?? pod.ssh?.proxy;
    if (!endpoint) return "the pod has no SSH endpoint yet";
    return sshBanner(endpoint.host, endpoint.port, budget);
  }
  const url = proxiedUrl(pod, waitFor.port, waitFor.path ?? "/");
  const expect = waitFor.expectStatus ?? 200;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(budget), redirect: "manual" });
    await response.body?.cancel();
    return response.status === expect
      ? true
      : `port ${waitFor.port} answered ${response.status}, not ${expect}`;
  } catch (error) {
    return `port ${waitFor.port} did not answer (${(error as Error).message})`;
  }
}

/** The pod's HTTP port as reachable: its runtime mapping when it has one, else RunPod's proxy URL. */
export function proxiedUrl(pod: Pod, port: number, path: string): string {
  const mapped = pod.runtime?.ports?.find((p) => p.private === port && p.type === "http" && p.ip && p.public);
  if (mapped) return `http://${mapped.ip}:${mapped.public}${path}`;
  return `https://${pod.id}-${port}.proxy.runpod.net${path}`;
}

/** Connects and reads until an `SSH-` banner line: true, else what happened. */
export function sshBanner(host: string, port: number, timeoutMs: number): Promise<true | string> {
  return new Promise((resolve) => {
    let text = "";
    // The host is the service's text: one printable line in the messages.
    const where = `${boundEntry(host)}:${port}`;
    const socket = net.connect({ host, port });
    const done = (result: true | string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(`no SSH banner from ${where} within ${timeoutMs} ms`), timeoutMs);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.startsWith("SSH-")) done(true);
      else if (text.length >= 4 && !"SSH-".startsWith(text.slice(0, 4))) {
        done(`${where} answered something other than an SSH banner`);
      }
    });
    socket.on("error", (error) => done(`SSH endpoint ${where} refused (${printable(error.message)})`));
    socket.on("end", () => done(`SSH endpoint ${where} closed without a banner`));
  });
}
