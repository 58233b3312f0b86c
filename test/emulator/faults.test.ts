import { afterEach, describe, expect, it } from "vitest";
import { FaultInjector, parseFaults } from "../../src/emulator/faults";
import { type Harness, harness } from "./helpers";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function statuses(options: Parameters<typeof harness>[0], n: number): Promise<number[]> {
  const local = await harness(options);
  try {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await local.call("GET", "/v2/echo/health")).status);
    return out;
  } finally {
    await local.close();
  }
}

describe("fault spec", () => {
  it("parses every kind", () => {
    expect(parseFaults("429=0.05,503=0.05,500=0.05,reset=0.05,latency=0-200")).toEqual({
      "429": 0.05,
      "503": 0.05,
      "500": 0.05,
      reset: 0.05,
      latency: { min: 0, max: 200 },
    });
  });

  it("names what is wrong", () => {
    expect(() => parseFaults("418=0.1")).toThrow(
      'faults: unknown fault "418"; allowed: 429, 503, 500, reset, latency',
    );
    expect(() => parseFaults("429=2")).toThrow("faults: 429 must be a probability between 0 and 1");
    expect(() => parseFaults("latency=9-1")).toThrow("latency MIN must not exceed MAX");
    expect(() => parseFaults("429=0.6,503=0.6")).toThrow("add up to 1.2");
  });
});

describe("fault injection", () => {
  it("draws latency uniformly within the range, reproducibly per seed", () => {
    const draw = (seed: number) => {
      const f = new FaultInjector({ latency: { min: 50, max: 150 } }, seed);
      return Array.from({ length: 200 }, () => f.latencyMs());
    };
    const a = draw(1);
    expect(draw(1)).toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...a)).toBeLessThanOrEqual(150);
    expect(a.filter((ms) => ms < 100).length).toBeGreaterThan(60); // both halves of the range occur
    expect(a.filter((ms) => ms >= 100).length).toBeGreaterThan(60);
  });

  it("is deterministic for a given seed", async () => {
    const options = { faults: "429=0.3,503=0.3", faultSeed: 42 };
    const first = await statuses(options, 30);
    expect(await statuses(options, 30)).toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 429, 503]));
    expect(await statuses({ ...options, faultSeed: 43 }, 30)).not.toEqual(first);
  });

  it("answers 429 and 503 before acting, with Retry-After", async () => {
    for (const kind of ["429", "503"]) {
      h = await harness({ faults: `${kind}=1` });
      const res = await h.call("POST", "/v2/echo/run", { input: {} });
      expect(res.status).toBe(Number(kind));
      expect(res.headers["retry-after"]).toBe("1");
      expect(h.emu.stats().submitted.echo).toBe(0);
      expect(h.emu.stats().faults[kind as "429"]).toBe(1);
      await h.close();
      h = undefined;
    }
  });

  it("answers 500 to a POST after acting on it: the job exists", async () => {
    h = await harness({ faults: "500=1" });
    const res = await h.call("POST", "/v2/echo/run", { input: {} });
    expect(res.status).toBe(500);
    expect(res.body.message).toMatch(/after the request was acted on/);
    expect(h.emu.stats().submitted.echo).toBe(1);
    const reg = await h.call("POST", "/v2/registries", { name: "r", username: "u", password: "p" });
    expect(reg.status).toBe(500);
    expect(reg.headers["content-type"]).toMatch(/problem\+json/);
  });

  it("never turns a refused request (400, 404, 422, 429) into a post-action 500", async () => {
    h = await harness({
      faults: "500=1",
      faultSeed: 3,
      rateLimits: { run: { requests: 2, windowMs: 10_000 } }, // the 400 takes one of the two
    });
    const invalid = await h.call("POST", "/v2/echo/run", { nope: 1 });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).not.toMatch(/injected fault/);
    const unknownJob = await h.call("POST", "/v2/echo/cancel/no-such-job");
    expect(unknownJob.status).toBe(404);
    expect(unknownJob.body.message).toMatch(/job no-such-job not found/);
    const acted = await h.call("POST", "/v2/echo/run", { input: {} });
    expect(acted.status).toBe(500);
    expect(acted.body.message).toMatch(/after the request was acted on/);
    const limited = await h.call("POST", "/v2/echo/run", { input: {} });
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    expect(limited.body.message).toMatch(/rate limit of run exceeded/);
    expect(h.emu.stats().submitted.echo).toBe(1);
    expect(h.emu.stats().faults["500"]).toBe(1); // only the answer that was really replaced
    const badV2 = await h.call("POST", "/v2/registries", { name: "r" });
    expect(badV2.status).toBe(422); // v2 validation failure, not a 500
    expect(badV2.body.detail).not.toMatch(/injected fault/);
    expect(h.emu.stats().faults["500"]).toBe(1);
  });

  it("never resets a refused request after the fact; a successful POST is reset", async () => {
    h = await harness({ faults: "reset=1", faultSeed: 7 });
    let answered = 0;
    for (let i = 0; i < 12; i++) {
      const res = await h.call("POST", "/v2/echo/run", { nope: i }).catch(() => undefined);
      if (res) {
        expect(res.status).toBe(400);
        answered++;
      }
    }
    expect(answered).toBeGreaterThan(0); // the "after" draws answered with the real 400
    expect(answered).toBeLessThan(12); // the "before" draws still reset
    expect(h.emu.stats().faults.reset).toBe(12 - answered);
    await expect(h.call("POST", "/v2/echo/run", { input: {} })).rejects.toThrow();
  });

  it("resets connections before or after acting", async () => {
    h = await harness({ faults: "reset=1", faultSeed: 7 });
    let failures = 0;
    for (let i = 0; i < 12; i++) {
      await h.call("POST", "/v2/echo/run", { input: { i } }).then(
        () => undefined,
        (err: Error & { code?: string }) => {
          expect(err.code).toMatch(/UND_ERR_SOCKET|ECONNRESET/);
          failures++;
        },
      );
    }
    expect(failures).toBe(12);
    const submitted = h.emu.stats().submitted.echo as number;
    expect(submitted).toBeGreaterThan(0); // some resets came after the job was made
    expect(submitted).toBeLessThan(12); // and some before
    expect(h.emu.stats().faults.reset).toBe(12);
  });

  it("does not fault a request that fails auth", async () => {
    h = await harness({ faults: "503=1" });
    expect((await h.call("GET", "/v2/echo/health", undefined, { authorization: "Bearer nope" })).status).toBe(
      401,
    );
    expect(h.emu.stats().faults["503"]).toBe(0);
  });
});
