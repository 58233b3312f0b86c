/**
 * JobRun's `expect.allowErrorOutput`, `expect.maxDelayMs` and `expect.maxExecutionMs`:
 * the argument checks and verdicts as functions, then each rule through Pulumi's real
 * dynamic-provider host with `__provider` serialized from the INSTALLED package, against the emulator.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { recordedRunPassed } from "../../src/provider/jobRun/diff";
import { resolveJobRunArgs } from "../../src/provider/smokeTestJob/jobArgs";
import { checkJobRunArgs } from "../../src/provider/smokeTestJob/jobArgsCheck";
import { outputSchemaViolations } from "../../src/provider/smokeTestJob/outputSchema";
import { judge } from "../../src/provider/smokeTestJob/verdict";
import { type ProviderHost, urnFor } from "../support/providerHost.mts";
import { createFailing, createPassing, startJobRunHost } from "./jobRunHostKit";

const timeline = [{ status: "COMPLETED", atMs: 10 }];
const resolved = (expect: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  resolveJobRunArgs({ endpointId: "echo", input: {}, expect, ...extra });

describe("expect rules as functions", () => {
  it("checks the new expect fields by name and rule", () => {
    const failures = checkJobRunArgs({
      endpointId: "echo",
      input: {},
      expect: { allowErrorOutput: "yes", maxDelayMs: 0, maxExecutionMs: 1.5 },
    });
    expect(failures).toEqual([
      { property: "expect.allowErrorOutput", reason: expect.stringContaining("must be a boolean") },
      {
        property: "expect.maxDelayMs",
        reason: expect.stringContaining("expect.maxDelayMs must be at least 1 ms"),
      },
      { property: "expect.maxExecutionMs", reason: expect.stringContaining("must be an integer") },
    ]);
    expect(
      checkJobRunArgs({ endpointId: "echo", input: {}, expect: { allowErrorOutput: true, maxDelayMs: 5 } }),
    ).toEqual([]);
    expect(resolved().expect).toMatchObject({ status: "COMPLETED", allowErrorOutput: false });
  });

  it("fails a COMPLETED job whose output has an error field or is missing, naming the opt-out", () => {
    const withError = judge(resolved(), {
      status: "COMPLETED",
      output: { error: "CUDA out of memory" },
      attempts: 1,
      timeline,
    });
    expect(withError).toContain('has an error field: "CUDA out of memory"');
    expect(withError).toContain("returned its error instead of raising it");
    expect(withError).toContain("expect: { allowErrorOutput: true }");
    for (const output of [undefined, null]) {
      expect(judge(resolved(), { status: "COMPLETED", output, attempts: 1, timeline })).toContain(
        "its output is missing",
      );
    }
    const hidden = judge(resolved({}, { secretOutput: true }), {
      status: "COMPLETED",
      output: { error: "token sk-123 rejected" },
      attempts: 1,
      timeline,
    });
    expect(hidden).toContain("value hidden");
    expect(hidden).not.toContain("sk-123");
  });

  it("accepts an error output with allowErrorOutput, and never applies the rule to other fields or statuses", () => {
    const errorOutput = { status: "COMPLETED", output: { error: "x" }, attempts: 1, timeline };
    expect(judge(resolved({ allowErrorOutput: true }), errorOutput)).toBeUndefined();
    expect(judge(resolved(), { ...errorOutput, output: { errors: [], ok: true } })).toBeUndefined();
    expect(judge(resolved(), { ...errorOutput, output: [{ error: "in a list" }] })).toBeUndefined();
    expect(
      judge(resolved({ status: "FAILED" }), { status: "FAILED", attempts: 1, timeline }),
    ).toBeUndefined();
  });

  it("fails a missed latency budget naming the budget and the measured value; passes one met", () => {
    const result = {
      status: "COMPLETED",
      output: { ok: 1 },
      delayTime: 2500,
      executionTime: 40,
      attempts: 1,
      timeline,
    };
    const message = judge(resolved({ maxDelayMs: 1000, maxExecutionMs: 30 }), result);
    expect(message).toContain(
      "expect.maxDelayMs is 1000 ms but the job's delayTime (queue time, cold start included) was 2500 ms",
    );
    expect(message).toContain("expect.maxExecutionMs is 30 ms but the job's executionTime was 40 ms");
    expect(judge(resolved({ maxDelayMs: 2500, maxExecutionMs: 40 }), result)).toBeUndefined();
    expect(judge(resolved({ maxDelayMs: 1 }), { ...result, delayTime: undefined })).toContain(
      "the service reported no delayTime",
    );
  });

  it("judges a state recorded before `passed` existed by the rules it ran under", () => {
    const old = {
      endpointId: "echo",
      input: {},
      jobId: "j1",
      status: "COMPLETED",
      output: { error: "kept" },
    };
    expect(recordedRunPassed(old)).toBe(true);
    expect(recordedRunPassed({ ...old, expect: { allowErrorOutput: false } })).toBe(false);
  });
});

const SCHEMA = {
  type: "object",
  required: ["text", "tokens"],
  properties: {
    text: { type: "array", items: { type: "string" }, minItems: 1 },
    tokens: { type: "integer", minimum: 1 },
  },
};

describe("expect.outputSchema as functions", () => {
  it("checks the schema itself in check, naming expect.outputSchema", () => {
    const base = { endpointId: "echo", input: {} };
    expect(checkJobRunArgs({ ...base, expect: { outputSchema: SCHEMA } })).toEqual([]);
    expect(checkJobRunArgs({ ...base, expect: { outputSchema: true } })).toEqual([]);
    const bad = checkJobRunArgs({ ...base, expect: { outputSchema: { type: "strng" } } });
    expect(bad).toEqual([
      {
        property: "expect.outputSchema",
        reason: expect.stringContaining("expect.outputSchema: type must be one of array, boolean"),
      },
    ]);
    expect(checkJobRunArgs({ ...base, expect: { outputSchema: "object" } })).toEqual([
      { property: "expect.outputSchema", reason: expect.stringContaining("an object or a boolean") },
    ]);
    // 2020-12 keywords are understood: prefixItems, and $defs references.
    expect(
      checkJobRunArgs({
        ...base,
        expect: { outputSchema: { prefixItems: [{ $ref: "#/$defs/s" }], $defs: { s: { type: "string" } } } },
      }),
    ).toEqual([]);
  });

  it("loads ajv only for a JobRun that has an outputSchema (the built lifecycle module, in a fresh node)", () => {
    const script = [
      'const l = require("./dist/provider/compat/jobRun/lifecycle.js");',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source of a script run in a child process
      "const ajv = () => Object.keys(require.cache).some((k) => k.includes(`${require('path').sep}ajv${require('path').sep}`));",
      'l.checkJobRunArgs({ endpointId: "echo", input: {}, expect: { output: {} } });',
      "const before = ajv();",
      'l.checkJobRunArgs({ endpointId: "echo", input: {}, expect: { outputSchema: { type: "object" } } });',
      "console.log(JSON.stringify([before, ajv()]));",
    ].join("\n");
    const out = execFileSync(process.execPath, ["-e", script], { cwd: process.cwd(), encoding: "utf8" });
    expect(JSON.parse(out)).toEqual([false, true]);
  });

  it("lists every violation by instance path, and passes a satisfying output", () => {
    const result = {
      status: "COMPLETED",
      output: { text: [1, "ok", true], tokens: 0 },
      attempts: 1,
      timeline,
    };
    const message = judge(resolved({ outputSchema: SCHEMA }), result) ?? "";
    expect(message).toContain("does not satisfy expect.outputSchema (3 violations, by instance path)");
    expect(message).toContain("  /text/0: must be string");
    expect(message).toContain("  /text/2: must be string");
    expect(message).toContain("  /tokens: must be >= 1");
    expect(
      judge(resolved({ outputSchema: SCHEMA }), { ...result, output: { text: ["OK"], tokens: 3 } }),
    ).toBeUndefined();
    expect(judge(resolved({ outputSchema: SCHEMA }), { ...result, output: [] })).toContain(
      "  /: must be object",
    );
  });
});

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;

beforeAll(async () => {
  emu = await startEmulator({
    apiKeys: ["emu-key-expect14"],
    endpoints: ["errout:1", "nothing:1", "slow:1", "echoed:1", "deep:1"],
    handlers: {
      // A handler that returns its error instead of raising it.
      errout: async () => ({ error: "model weights not found at /models/llama" }),
      nothing: async () => undefined,
      echoed: async (job) => job.input,
      // An output nested `depth` levels deep: { a: { a: ... } }.
      deep: async (job) => {
        let value: unknown = "bottom";
        for (let i = 0; i < Number(job.input.depth); i++) value = { a: value };
        return value;
      },
      slow: async (job, { signal }) => {
        // Until the emulator's clock (Date.now) has moved `ms` on: a timer alone may fire a
        // millisecond early by that clock, and the job's executionTime would read 299 for 300.
        const until = Date.now() + Number(job.input.ms);
        while (Date.now() < until) {
          await new Promise((resolve, reject) => {
            const t = setTimeout(resolve, until - Date.now());
            signal.addEventListener("abort", () => {
              clearTimeout(t);
              reject(signal.reason);
            });
          });
        }
        return { slept: job.input.ms };
      },
    },
  });
  client = new RunpodClient({ apiKey: emu.apiKey, serverlessUrl: emu.serverlessUrl, restUrl: emu.restUrl });
  host = await startJobRunHost(emu);
});

afterAll(async () => {
  await host?.close();
  await emu?.close();
});

/** check then create, as the engine does; resolves with the created resource. */
const up = (name: string, news: Record<string, unknown>) => createPassing(host, name, news);

const upFails = (name: string, news: Record<string, unknown>) => createFailing(host, name, news);

describe("expect rules in the provider host", () => {
  it("fails a job that returned its error as the output, and passes it with allowErrorOutput", async () => {
    const error = await upFails("errout", { endpointId: "errout", input: {} });
    expect(error.properties).toMatchObject({
      status: "COMPLETED",
      output: { error: "model weights not found at /models/llama" },
      passed: false,
    });
    expect(error.message).toContain(
      'its output has an error field: "model weights not found at /models/llama"',
    );
    expect(error.message).toContain("expect: { allowErrorOutput: true }");
    const { outs } = await up("errout-allowed", {
      endpointId: "errout",
      input: {},
      expect: { allowErrorOutput: true },
    });
    expect(outs).toMatchObject({ status: "COMPLETED", passed: true });
  });

  it("fails a COMPLETED job with no output", async () => {
    const error = await upFails("nothing", { endpointId: "nothing", input: {} });
    expect(error.message).toContain("ended COMPLETED but its output is missing");
  });

  it("fails a missed execution budget with the measured executionTime, and passes a met one", async () => {
    const error = await upFails("exec-budget", {
      endpointId: "slow",
      input: { ms: 300 },
      expect: { maxExecutionMs: 50 },
    });
    const measured = error.properties.executionTime as number;
    expect(measured).toBeGreaterThanOrEqual(300);
    expect(error.message).toContain(
      `expect.maxExecutionMs is 50 ms but the job's executionTime was ${measured} ms`,
    );
    const { outs } = await up("exec-budget-met", {
      endpointId: "slow",
      input: { ms: 1 },
      expect: { maxExecutionMs: 60_000, maxDelayMs: 60_000 },
    });
    expect(outs.passed).toBe(true);
  });

  it("fails an output that breaks expect.outputSchema, listing the violations; rejects a bad schema in check", async () => {
    const error = await upFails("schema", {
      endpointId: "errout",
      input: {},
      expect: {
        allowErrorOutput: true,
        outputSchema: { type: "object", required: ["text"], additionalProperties: false },
      },
    });
    expect(error.message).toContain("does not satisfy expect.outputSchema (2 violations, by instance path)");
    expect(error.message).toContain("  /: must have required property 'text'");
    expect(error.message).toContain("  /: must NOT have additional properties");
    const { outs } = await up("schema-met", {
      endpointId: "slow",
      input: { ms: 1 },
      expect: { outputSchema: { type: "object", properties: { slept: { const: 1 } }, required: ["slept"] } },
    });
    expect(outs.passed).toBe(true);
    const { failures } = await host.check(
      urnFor("JobRun", "schema-bad"),
      {},
      {
        endpointId: "slow",
        input: {},
        expect: { outputSchema: { minimum: "one" } },
      },
    );
    expect(failures).toEqual([{ property: "", reason: expect.stringContaining("minimum must be a number") }]);
  });

  it("fails a missed queue budget with the measured delayTime", async () => {
    // The endpoint's one worker is busy for 400 ms, so the JobRun's job queues behind it.
    const blocker = await client.endpoint("slow").run({ input: { ms: 400 } });
    const error = await upFails("delay-budget", {
      endpointId: "slow",
      input: { ms: 1 },
      expect: { maxDelayMs: 100 },
    });
    const measured = error.properties.delayTime as number;
    expect(measured).toBeGreaterThan(100);
    expect(error.message).toContain(
      `expect.maxDelayMs is 100 ms but the job's delayTime (queue time, cold start included) was ${measured} ms`,
    );
    expect((await client.endpoint("slow").status(blocker.id)).status).toBe("COMPLETED");
  });
});

describe("expect.outputSchema: formats and patterns", () => {
  it("fails an output whose string breaks its format (email, uri, date-time), which used to pass", async () => {
    const emailBroken = await upFails("format-email", {
      endpointId: "echoed",
      input: { contact: "not-an-address", link: "no scheme here", at: "yesterday" },
      expect: {
        outputSchema: {
          type: "object",
          properties: {
            contact: { format: "email" },
            link: { format: "uri" },
            at: { format: "date-time" },
          },
        },
      },
    });
    expect(emailBroken.message).toContain('  /contact: must match format "email"');
    expect(emailBroken.message).toContain('  /link: must match format "uri"');
    expect(emailBroken.message).toContain('  /at: must match format "date-time"');
    const { outs } = await up("format-met", {
      endpointId: "echoed",
      input: { contact: "ops@example.com", link: "https://example.com/x", at: "2026-11-25T10:00:00Z" },
      expect: {
        outputSchema: {
          type: "object",
          properties: {
            contact: { format: "email" },
            link: { format: "uri" },
            at: { format: "date-time" },
          },
        },
      },
    });
    expect(outs.passed).toBe(true);
  });

  it("refuses in check a format it cannot check, and a pattern RE2 cannot run, naming expect.outputSchema", async () => {
    const check = (name: string, outputSchema: unknown) =>
      host.check(urnFor("JobRun", name), {}, { endpointId: "slow", input: {}, expect: { outputSchema } });
    const unknown = await check("format-unknown", { type: "string", format: "zip-code" });
    expect(unknown.failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(/uses format "zip-code", which cannot be checked.*Use one of .*email/),
      },
    ]);
    const lookahead = await check("pattern-lookahead", { type: "string", pattern: "^(?=.*\\d).+$" });
    expect(lookahead.failures).toEqual([{ property: "", reason: expect.stringContaining("Lookaround") }]);
    expect(host.stderr()).not.toContain("unknown format");
    for (const [name, loop] of [
      ["loop-dynamic", { $dynamicAnchor: "a", $dynamicRef: "#a" }],
      ["loop-ref", { $ref: "#" }],
      ["loop-defs", { $defs: { x: { $ref: "#/$defs/y" }, y: { $ref: "#/$defs/x" } }, $ref: "#/$defs/x" }],
    ] as const) {
      const looped = await check(name, loop);
      expect(looped.failures, name).toEqual([
        { property: "", reason: expect.stringContaining("refers to itself without end") },
      ]);
    }
  });

  it("runs a catastrophic pattern in linear time: the JobRun is judged and the host stays free", async () => {
    // ^(a+)+$ against "a" x 40 + "!" backtracks 2^40 steps on a backtracking engine (it ran 55 s
    // for 31 characters); RE2 answers at once, and a JobRun started alongside completes too.
    const [broken, other] = await Promise.all([
      upFails("pattern-catastrophic", {
        endpointId: "echoed",
        input: { text: `${"a".repeat(40)}!` },
        expect: { outputSchema: { properties: { text: { pattern: "^(a+)+$" } } } },
      }),
      up("alongside", { endpointId: "slow", input: { ms: 200 } }),
    ]);
    expect(broken.message).toContain('  /text: must match pattern "^(a+)+$"');
    expect(other.outs.passed).toBe(true);
  });
});

describe("expect.outputSchema patterns as functions", () => {
  it("checks each pattern of a schema by its own expression (RE2 engine, one compiled pattern each)", () => {
    const schema = {
      properties: { a: { pattern: "^x" }, b: { pattern: "^y" }, c: { pattern: "z$" } },
    };
    expect(outputSchemaViolations(schema, { a: "xa", b: "ya", c: "az" })).toEqual([]);
    expect(outputSchemaViolations(schema, { a: "ax", b: "ya", c: "za" })).toEqual([
      { path: "/a", message: 'must match pattern "^x"' },
      { path: "/c", message: 'must match pattern "z$"' },
    ]);
  });
});

describe("an output too deep to store", () => {
  it("records the job (its id, status, passed) with the output left out, whatever the nesting", async () => {
    const { id, outs } = await up("deep-output", { endpointId: "deep", input: { depth: 4000 } });
    expect(id).toBeTruthy();
    expect(outs).toMatchObject({
      status: "COMPLETED",
      passed: true,
      outputTruncated: true,
      outputDepth: 4000,
    });
    expect(outs.jobId).toEqual(expect.any(String));
    expect(outs.output).toBeUndefined();
  });

  it("judges expect on the deep output, and a failure still reaches the state as a partial failure", async () => {
    const error = await upFails("deep-expect", {
      endpointId: "deep",
      input: { depth: 4000 },
      expect: { output: { b: 1 } },
    });
    expect(error.id).toBeTruthy();
    expect(error.properties).toMatchObject({ status: "COMPLETED", passed: false, outputTruncated: true });
    expect(error.message).toContain("output.b: expected 1, got missing");
  });

  it("keeps an output nested within the bound", async () => {
    const { outs } = await up("shallow-output", { endpointId: "deep", input: { depth: 10 } });
    expect(outs.outputTruncated).toBeUndefined();
    expect(JSON.stringify(outs.output)).toContain("bottom");
  });
});
