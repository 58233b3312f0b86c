/**
 * The emulator as a server others run: one request nested 10,000 deep (20 KB) is answered and
 * does not crash the process (a structuredClone of the input overflowing the stack outside any
 * handler would).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { MAX_WORKERS_PER_ENDPOINT } from "../../src/emulator/serviceFacts";
import { MAX_JOB_INPUT_NESTING, MAX_JOB_OUTPUT_NESTING } from "../../src/wire/limits";

let emu: RunningEmulator;
const KEY = "nesting-key-0123";

beforeAll(async () => {
  emu = await startEmulator({
    apiKeys: [KEY],
    rateLimits: false,
    endpoints: ["echo", "deep"],
    handlers: {
      deep: async (job) => {
        let value: unknown = "bottom";
        for (let i = 0; i < Number(job.input.depth); i++) value = { a: value };
        return value;
      },
    },
  });
});
afterAll(async () => {
  await emu?.close();
});

/** A JSON body `{"input": {"a": {"a": ... "x"}}}` nested `depth` deep, written without recursion. */
const deepBody = (depth: number) => `{"input":${'{"a":'.repeat(depth)}"x"${"}".repeat(depth)}}`;

const post = (path: string, body: string) =>
  fetch(`${emu.serverlessUrl}${path}`, {
    method: "POST",
    headers: { authorization: KEY, "content-type": "application/json" },
    body,
  });

describe("job input and output nesting", () => {
  it("refuses an input nested 10,000 deep with a 400 naming input and the bound, and keeps serving", async () => {
    const res = await post("/v2/echo/run", deepBody(10_000));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(`input: nested more than ${MAX_JOB_INPUT_NESTING} levels deep`);
    const ok = await post("/v2/echo/runsync", deepBody(MAX_JOB_INPUT_NESTING - 1));
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { status: string }).status).toBe("COMPLETED");
  });

  it("fails a job whose handler returns an output nested past the bound, saying why, instead of answering 500 for ever", async () => {
    const res = await post("/v2/deep/runsync", JSON.stringify({ input: { depth: 10_000 } }));
    expect(res.status).toBe(200);
    const job = (await res.json()) as { status: string; error?: string };
    expect(job.status).toBe("FAILED");
    expect(job.error).toBe(
      `the handler's output nests more than ${MAX_JOB_OUTPUT_NESTING} levels deep, more than the emulator keeps`,
    );
  });
});

describe("memory the emulator holds is bounded", () => {
  it("refuses workers.max past its cap with a 400 naming the field, on create and update", async () => {
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const create = await fetch(`${emu.restUrl}/serverless`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "huge",
        type: "QUEUE",
        image: "acme/x:1",
        gpu: { pools: ["ADA_24"] },
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        workers: { max: 1e7 },
      }),
    });
    expect(create.status).toBe(400);
    expect(await create.text()).toContain(
      `workers.max: the emulator runs at most ${MAX_WORKERS_PER_ENDPOINT} workers per endpoint, got 10000000`,
    );
    const update = await fetch(`${emu.restUrl}/serverless/echo`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ workers: { max: 1e7 } }),
    });
    expect(update.status).toBe(400);
  });

  it("evicts the oldest results past retention.maxBytes, and their /status says why", async () => {
    const small = await startEmulator({
      apiKeys: [KEY],
      rateLimits: false,
      endpoints: ["echo"],
      retention: { maxBytes: 2_500_000 },
    });
    try {
      const run = async () => {
        const res = await fetch(`${small.serverlessUrl}/v2/echo/runsync`, {
          method: "POST",
          headers: { authorization: KEY, "content-type": "application/json" },
          body: JSON.stringify({ input: { blob: "x".repeat(1_000_000) } }),
        });
        return ((await res.json()) as { id: string }).id;
      };
      const ids = [await run(), await run(), await run()];
      const status = (id: string) =>
        fetch(`${small.serverlessUrl}/v2/echo/status/${id}`, { headers: { authorization: KEY } });
      const first = await status(ids[0] as string);
      expect(first.status).toBe(404);
      expect(await first.text()).toContain("its result was evicted early, oldest first");
      for (const id of ids.slice(1)) expect((await status(id)).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});
