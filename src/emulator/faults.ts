/**
 * Fault injection: makes the emulator misbehave the way a real service over a real network does,
 * so clients and providers are tested against it. Every decision comes from a seeded generator,
 * so a test that fixes `faultSeed` sees the same sequence of faults on every run.
 *
 * When each fault happens, relative to the request being acted on:
 * - `429` and `503`: before (nothing was done), with `Retry-After: 1`.
 * - `500`: on a POST, AFTER the request was acted on (the job exists, the credential was made);
 *   on other methods before. This is the ambiguous case a client must not blindly retry.
 * - `reset`: the TCP connection is destroyed without an answer, before or after acting (50/50).
 * A post-action fault (500 or reset "after") applies only to a request that was really acted on,
 * i.e. whose answer is a success (< 400); a refused request (400, 404, 413, 429, ...) gets its real
 * answer, so a fault never claims that a refused request did something.
 * - `latency=MIN-MAX`: every request waits a uniform random time in [MIN, MAX] ms of real time first.
 */

/** Probabilities (0..1) of each fault per request, and the injected latency range in ms. */
export interface FaultConfig {
  /** Chance of a 429 answer before acting. @default 0 */
  "429"?: number;
  /** Chance of a 503 answer before acting. @default 0 */
  "503"?: number;
  /** Chance of a 500 answer (after acting on a POST). @default 0 */
  "500"?: number;
  /** Chance of a connection reset (before or after acting). @default 0 */
  reset?: number;
  /** Added latency per request, uniform in [min, max] ms. @default none */
  latency?: { min: number; max: number };
}

/** What to do to one request. */
export type FaultDecision =
  | { kind: "none" }
  | { kind: "429" | "503"; when: "before" }
  | { kind: "500"; when: "before" | "after" }
  | { kind: "reset"; when: "before" | "after" };

const KEYS = ["429", "503", "500", "reset", "latency"] as const;

/**
 * Parses `"429=0.05,503=0.05,500=0.05,reset=0.05,latency=0-200"`. Each key is optional; the sum
 * of the probabilities must not exceed 1. Throws an error naming the bad part.
 */
export function parseFaults(spec: string): FaultConfig {
  const config: FaultConfig = {};
  for (const raw of spec.split(",")) {
    const part = raw.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq).trim();
    const value = eq < 0 ? "" : part.slice(eq + 1).trim();
    if (!(KEYS as readonly string[]).includes(key)) {
      throw new Error(`faults: unknown fault "${key}"; allowed: 429, 503, 500, reset, latency`);
    }
    if (key === "latency") {
      const m = /^(\d+)(?:-(\d+))?$/.exec(value);
      if (!m) throw new Error(`faults: latency must be MIN-MAX in ms (e.g. latency=0-200), got "${value}"`);
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : Number(m[2]);
      if (max < min) throw new Error(`faults: latency MIN must not exceed MAX, got "${value}"`);
      config.latency = { min, max };
      continue;
    }
    const p = Number(value);
    if (value === "" || !Number.isFinite(p) || p < 0 || p > 1) {
      throw new Error(`faults: ${key} must be a probability between 0 and 1, got "${value}"`);
    }
    config[key as "429" | "503" | "500" | "reset"] = p;
  }
  return validateFaults(config);
}

/** Checks a parsed fault object; returns it unchanged. */
export function validateFaults(config: FaultConfig): FaultConfig {
  let sum = 0;
  for (const key of ["429", "503", "500", "reset"] as const) {
    const p = config[key] ?? 0;
    if (typeof p !== "number" || !Number.isFinite(p) || p < 0 || p > 1) {
      throw new Error(`faults: ${key} must be a probability between 0 and 1`);
    }
    sum += p;
  }
  if (sum > 1 + 1e-9) throw new Error(`faults: the probabilities add up to ${sum}; at most 1 is allowed`);
  const l = config.latency;
  if (l && !(Number.isFinite(l.min) && Number.isFinite(l.max) && l.min >= 0 && l.max >= l.min)) {
    throw new Error("faults: latency must have 0 <= min <= max (ms)");
  }
  return config;
}

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws fault decisions from one seeded sequence and counts what it injected. */
export class FaultInjector {
  readonly config: FaultConfig;
  readonly #random: () => number;
  /** How many faults of each kind were injected so far. */
  readonly counts = { "429": 0, "503": 0, "500": 0, reset: 0 };

  /** @param seed  fixes the sequence of decisions. @default a random seed */
  constructor(config: FaultConfig, seed: number = Math.floor(Math.random() * 2 ** 32)) {
    this.config = validateFaults(config);
    this.#random = seededRandom(seed);
  }

  /** True when no fault and no latency is configured. */
  get inactive(): boolean {
    const c = this.config;
    return !c["429"] && !c["503"] && !c["500"] && !c.reset && !c.latency;
  }

  /** Latency to add to the next request, in ms (0 when none is configured). */
  latencyMs(): number {
    const l = this.config.latency;
    if (!l) return 0;
    return Math.round(l.min + this.#random() * (l.max - l.min));
  }

  /** Decides the fault of one request; `method` decides whether a 500 comes before or after. */
  decide(method: string): FaultDecision {
    const c = this.config;
    const r = this.#random();
    let edge = 0;
    const hit = (p: number | undefined) => {
      edge += p ?? 0;
      return r < edge;
    };
    let decision: FaultDecision = { kind: "none" };
    if (hit(c["429"])) decision = { kind: "429", when: "before" };
    else if (hit(c["503"])) decision = { kind: "503", when: "before" };
    else if (hit(c["500"])) decision = { kind: "500", when: method === "POST" ? "after" : "before" };
    else if (hit(c.reset)) decision = { kind: "reset", when: this.#random() < 0.5 ? "before" : "after" };
    if (decision.kind !== "none" && decision.when === "before") this.counts[decision.kind]++;
    return decision;
  }

  /**
   * Counts a post-action fault that was really applied. The server calls it only when the request
   * was acted on (its route succeeded); a refused request keeps its real answer and is not counted.
   */
  recordAfter(decision: FaultDecision): void {
    if (decision.kind !== "none" && decision.when === "after") this.counts[decision.kind]++;
  }
}
