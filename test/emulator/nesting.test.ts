/**
 * The emulator as a server others run (issue 22 #10): one request nested 10,000 deep (20 KB)
 * crashed the process (structuredClone of the input overflowed the stack outside any handler).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
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
