/**
 * The emulator's usage meter: the spans during which something billable ran, each with the hourly
 * rate it ran at, on the emulator's clock. The billing routes (`ledger.ts`) add these spans up.
 *
 * What bills (the v2 document prices units per hour and bills usage, not reservations):
 * - A serverless worker bills while it runs a job: from the job's start on the worker to its end
 *   (completed, failed, cancelled, timed out, or its endpoint deleted). An idle warm worker bills
 *   nothing. The rate is fixed when the job starts: the endpoint's first pool's GPU price
 *   (`GpuType.price.serverless`, the first GPU type of that pool in catalog order) x `gpu.count`,
 *   or the CPU flavour's `price.serverlessPerVcpu` x `vcpuCount`. The `EMULATOR` pool of the
 *   `--endpoint` endpoints has no GPU type and no price: its jobs are metered at $0.
 * - A pod bills its own `cost` (USD per hour) while it is RUNNING; a cluster's member pod bills
 *   the same way, to its cluster (kind `cluster`, the cluster's id): the document keeps Instant
 *   Cluster spend apart from pod spend (`clusterGpuAmount` next to `podGpuAmount`).
 * Load-balancer requests are not metered.
 */
import type { Clock } from "../clock";

/** What a span is billed as. */
export interface Usage {
  kind: "pod" | "serverless" | "cluster";
  /** The pod id, the serverless endpoint id or the cluster id. */
  resourceId: string;
  /** Which cost component it counts in. */
  component: "gpu" | "cpu";
  /** USD per hour while it runs. */
  ratePerHour: number;
}

/** One metered span, ms of the emulator's clock; `end` is undefined while it still runs. */
export interface UsageSpan extends Usage {
  start: number;
  end?: number;
}

/** How the job engine reports the work of its workers. */
export interface JobUsageSink {
  /** A job began running on a worker of `endpointId`. */
  jobStarted(endpointId: string, jobId: string): void;
  /** The job stopped running (whatever its final status). */
  jobEnded(endpointId: string, jobId: string): void;
  /** The endpoint is gone: whatever still ran on it stops being billed. */
  endpointRemoved(endpointId: string): void;
}

/** How the pod store reports a pod's status. */
export interface PodUsageSink {
  podStatus(pod: MeteredPod): void;
}

/** What the meter reads of a pod: a cluster's member carries its cluster's id. */
export interface MeteredPod {
  id: string;
  status: string;
  cost?: number | null;
  gpu?: unknown;
  cluster?: { id: string };
}

/** The serverless rate of an endpoint now, or undefined when the endpoint is unknown. */
export type ServerlessRate = (endpointId: string) => Pick<Usage, "component" | "ratePerHour"> | undefined;

/** Records billable spans from the job engine and the pod store. */
export class UsageMeter implements JobUsageSink, PodUsageSink {
  readonly #clock: Clock;
  readonly #spans: UsageSpan[] = [];
  readonly #open = new Map<string, UsageSpan>();
  /** Prices a serverless endpoint (set once the serverless store exists). */
  serverlessRate: ServerlessRate = () => undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Starts a span under `key`, ending the one already open under it. */
  open(key: string, usage: Usage): void {
    this.close(key);
    const span: UsageSpan = { ...usage, start: this.#clock.now() };
    this.#spans.push(span);
    this.#open.set(key, span);
  }

  /** Ends the span open under `key`, if any. */
  close(key: string): void {
    const span = this.#open.get(key);
    if (!span) return;
    span.end = this.#clock.now();
    this.#open.delete(key);
  }

  jobStarted(endpointId: string, jobId: string): void {
    const rate = this.serverlessRate(endpointId) ?? { component: "gpu", ratePerHour: 0 };
    this.open(`job|${endpointId}|${jobId}`, { kind: "serverless", resourceId: endpointId, ...rate });
  }

  jobEnded(endpointId: string, jobId: string): void {
    this.close(`job|${endpointId}|${jobId}`);
  }

  endpointRemoved(endpointId: string): void {
    for (const key of [...this.#open.keys()]) if (key.startsWith(`job|${endpointId}|`)) this.close(key);
  }

  podStatus(pod: MeteredPod): void {
    const key = `pod|${pod.id}`;
    if (pod.status !== "RUNNING") {
      this.close(key);
      return;
    }
    if (this.#open.has(key)) return;
    this.open(key, {
      kind: pod.cluster ? "cluster" : "pod",
      resourceId: pod.cluster ? pod.cluster.id : pod.id,
      component: pod.gpu ? "gpu" : "cpu",
      ratePerHour: pod.cost ?? 0,
    });
  }

  /** Every span so far; a running one ends now. */
  spans(): UsageSpan[] {
    const now = this.#clock.now();
    return this.#spans.map((s) => ({ ...s, end: s.end ?? now }));
  }
}
