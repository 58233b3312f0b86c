import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Harness, harness, untilStatus } from "./helpers";

let dir: string;
let h: Harness;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "emu-handlers-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await h?.close();
});

describe("handler modules", () => {
  it("loads a CommonJS module whose export is one handler for every endpoint", async () => {
    const file = join(dir, "one.cjs");
    await writeFile(
      file,
      "module.exports = async (job) => ({ upper: job.input.text.toUpperCase(), endpoint: job.endpointId });\n",
    );
    h = await harness({ handlers: file, endpoints: ["a", "b"] });
    const run = await h.call("POST", "/v2/b/run", { input: { text: "hi" } });
    expect((await untilStatus(h, "b", run.body.id, "COMPLETED")).body.output).toEqual({
      upper: "HI",
      endpoint: "b",
    });
  });

  it("loads an ES module mapping endpoint ids to handlers; other endpoints run the built-in worker", async () => {
    const file = join(dir, "map.mjs");
    await writeFile(
      file,
      [
        "export default {",
        "  async *tokens(job) { for (const w of job.input.prompt.split(' ')) yield { text: w }; return 'all done'; },",
        "  plain: async () => 'plain',",
        "};",
      ].join("\n"),
    );
    h = await harness({ handlers: file, endpoints: ["tokens", "plain", "echo"] });
    const run = await h.call("POST", "/v2/tokens/run", { input: { prompt: "a b c" } });
    const done = await untilStatus(h, "tokens", run.body.id, "COMPLETED");
    expect(done.body.output).toBe("all done");
    expect((await h.call("GET", `/v2/tokens/stream/${run.body.id}`)).body.stream).toEqual([
      { output: { text: "a" } },
      { output: { text: "b" } },
      { output: { text: "c" } },
    ]);
    expect((await h.call("POST", "/v2/plain/runsync", { input: {} })).body.output).toBe("plain");
    expect((await h.call("POST", "/v2/echo/runsync", { input: { x: 1 } })).body.output).toEqual({ x: 1 });
  });

  it("a generator returning nothing outputs the yielded values", async () => {
    h = await harness({
      handlers: async function* () {
        yield 1;
        yield 2;
      },
    });
    expect((await h.call("POST", "/v2/echo/runsync", { input: {} })).body.output).toEqual([1, 2]);
  });

  it("a thrown error fails the job with its message", async () => {
    h = await harness({
      handlers: async () => {
        throw new Error("CUDA out of memory");
      },
    });
    expect((await h.call("POST", "/v2/echo/runsync", { input: {} })).body).toMatchObject({
      status: "FAILED",
      error: "CUDA out of memory",
    });
  });

  it("passes s3Config to the handler but never echoes it", async () => {
    let seen: unknown;
    h = await harness({
      handlers: async (job) => {
        seen = job.s3Config;
        return "ok";
      },
    });
    const s3Config = {
      accessId: "id",
      accessSecret: "very-secret",
      bucketName: "b",
      endpointUrl: "https://s3.example",
    };
    const res = await h.call("POST", "/v2/echo/runsync", { input: {}, s3Config });
    expect(seen).toEqual(s3Config);
    expect(JSON.stringify(res.body)).not.toContain("very-secret");
  });

  it("aborts the handler's signal on cancel", async () => {
    let aborted = false;
    h = await harness({
      handlers: (_job, { signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener("abort", () => {
            aborted = true;
            reject(signal.reason);
          }),
        ),
    });
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    await h.call("POST", `/v2/echo/cancel/${run.body.id}`);
    expect(aborted).toBe(true);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).body.status).toBe("CANCELLED");
  });

  it("refuses a module that exports no handler, naming the file", async () => {
    const file = join(dir, "bad.cjs");
    await writeFile(file, "module.exports = { echo: 42 };\n");
    await expect(harness({ handlers: file })).rejects.toThrow(
      /maps endpoint or image "echo" to a number; expected a function/,
    );
    await expect(harness({ handlers: join(dir, "missing.js") })).rejects.toThrow(
      /handlers: cannot load .*missing\.js/,
    );
  });
});
