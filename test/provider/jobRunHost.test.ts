/**
 * JobRun through Pulumi's real dynamic-provider host (gRPC), with `__provider` serialized from the
 * INSTALLED package, against the emulator. Each test is one behaviour of a JobRun
 * as a user's deploy sees it.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type Clock, type RunningEmulator, realClock, startEmulator } from "../../src/emulator";
import { HostError, type ProviderHost, secretValue, UNKNOWN, urnFor } from "../support/providerHost.mts";
import { serializedProvider } from "../support/serializedProvider.mts";
import { engineText } from "./engineText";
import { createFailing, createPassing, expectReasons, startJobRunHost } from "./jobRunHostKit";

const S3 = {
  accessId: "AKIAEXAMPLE",
  accessSecret: "s3-secret-d41d8cd98f00b204",
  bucketName: "results",
  endpointUrl: "https://s3.example.com",
};
/**
 * s3 credentials for the secrets scan: characters that URL-encoding, form-encoding and HTML
 * escaping each change, so every form differs from the raw one.
 */
const LEAK_S3 = {
  accessId: "AKIA-leak-scan-01",
  accessSecret: 's3+leak/scan&<secret>=9f "q"',
  bucketName: "results",
  endpointUrl: "https://s3.example.com",
};
/** The forms a worker or a server plausibly echoes a secret in. */
function secretForms(secret: string): Record<string, string> {
  return {
    raw: secret,
    json: JSON.stringify(secret).slice(1, -1),
    url: encodeURIComponent(secret),
    form: new URLSearchParams({ k: secret }).toString().slice(2),
    html: secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"),
  };
}
/**
 * Every form of every secret the leaky worker knows, as one text: the API key, and the s3
 * accessSecret unless the job was given no s3Config (`apiKeyOnly`), when it is none of its secrets.
 */
const leakText = (apiKeyOnly = false) =>
  (apiKeyOnly ? [emu.apiKey] : [LEAK_S3.accessSecret, emu.apiKey])
    .flatMap((s) => Object.values(secretForms(s)))
    .join(" | ");
/** One kilobyte of JSON text. */
const KB = "x".repeat(1_000);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;
/** Job ids of "flaky" that already failed once (the handler fails each job's first run). */
const flakyFailed = new Set<string>();
/** While true, the "toggle" endpoint fails every job. */
let toggleBroken = true;
/** Wall-clock ms at which each "timed" job's handler returned, by job id. */
const finishedAt = new Map<string, number>();

/** The least `policy.executionTimeout` the service takes: more than 5000 ms. */
const LEAST_EXECUTION_TIMEOUT_MS = 5_001;
/**
 * Real time, except that a timer of exactly {@link LEAST_EXECUTION_TIMEOUT_MS} (only the
 * executionTimeout test's job sets one) fires after 20 ms: that test is of how the provider reports
 * a job the service timed out, not of the emulator's timer (tested in test/emulator/jobs.test.ts).
 */
const clock: Clock = {
  ...realClock,
  setTimeout: (fn, ms) => realClock.setTimeout(fn, ms === LEAST_EXECUTION_TIMEOUT_MS ? 20 : ms),
};

beforeAll(async () => {
  emu = await startEmulator({
    clock,
    apiKeys: ["emu-key-7f3a9c2e"],
    endpoints: ["echo:3", "flaky:2", "toggle:2", "timed:2", "leaky:2", "big:2"],
    handlers: {
      // Echoes every secret it knows, in every form, wherever input.where says.
      leaky: async function* (job) {
        const where = String(job.input.where);
        const text = leakText(job.input.apiKeyOnly === true);
        if (where === "stream") yield { leak: text };
        if (where === "error") throw new Error(`could not reach s3: ${text}`);
        return { leak: text };
      },
      // An output of input.kb kilobytes of JSON (an array of 1 KB strings), with a marker last.
      big: async (job) => ({ items: Array.from({ length: Number(job.input.kb) }, () => KB), last: "end" }),
      flaky: async (job) => {
        if (!flakyFailed.has(job.id)) {
          flakyFailed.add(job.id);
          throw new Error("first run always fails");
        }
        return { ok: true };
      },
      toggle: async () => {
        if (toggleBroken) throw new Error("model weights not found at /models/llama");
        return { ok: true };
      },
      timed: async (job, { signal }) => {
        await new Promise((resolve, reject) => {
          const t = setTimeout(resolve, Number(job.input.ms));
          signal.addEventListener("abort", () => {
            clearTimeout(t);
            reject(signal.reason);
          });
        });
        finishedAt.set(job.id, Date.now());
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

/** check then create, expecting a partial failure (see createFailing). */
const upFails = (name: string, news: Record<string, unknown>) => createFailing(host, name, news);

const statuses = (timeline: { status: string }[]) => timeline.map((e) => e.status);

describe("JobRun in the provider host", () => {
  it("records a completed job under its own stable id, not the job id", async () => {
    const { id, outs } = await up("completed", { endpointId: "echo", input: { output: { ok: true } } });
    expect(id).toMatch(UUID);
    expect(outs.jobId).not.toBe(id);
    expect(outs).toMatchObject({ status: "COMPLETED", output: { ok: true }, attempts: 1 });
    expect(statuses(outs.timeline).at(-1)).toBe("COMPLETED");
    expect(typeof outs.executionTime).toBe("number");
    expect(Date.parse(outs.completedAt)).toBeGreaterThanOrEqual(Date.parse(outs.startedAt));
    expect(outs.__provider).toEqual(expect.any(String));
  });

  it("fails a FAILED job as a partial failure carrying endpoint, job id, status, worker error, timeline and hint", async () => {
    const error = await upFails("failed", {
      endpointId: "echo",
      input: { fail: "CUDA error: out of memory" },
    });
    expect(error.id).toMatch(UUID);
    expect(error.properties).toMatchObject({
      status: "FAILED",
      error: "CUDA error: out of memory",
      attempts: 1,
    });
    expect(error.properties.__provider).toEqual(expect.any(String));
    const jobId = error.properties.jobId as string;
    expect(error.message).toContain(`endpoint echo, job ${jobId}`);
    expect(error.message).toContain("ended FAILED, expected COMPLETED");
    expect(error.message).toContain("Worker error: CUDA error: out of memory");
    expect(error.message).toMatch(/Timeline: IN_QUEUE .* -> FAILED/);
    expect(error.message).toContain("Hint:");
    // What `pulumi up` prints: the reasons, joined by the engine (before: "resource init failed").
    const printed = engineText(error);
    expect(printed).not.toContain("resource init failed");
    expect(printed).toContain(`endpoint echo, job ${jobId}`);
    expect(printed).toContain("Worker error: CUDA error: out of memory");
    expect(printed).toMatch(/Timeline: IN_QUEUE .* -> FAILED/);
    expect(printed).toContain("Hint:");
  });

  it("carries reasons on a partial failure of update too, and prints a plain error's message", async () => {
    toggleBroken = true;
    const failed = await upFails("update-reasons", { endpointId: "toggle", input: { n: 2 } });
    const urn = urnFor("JobRun", "update-reasons");
    const error = await host
      .update(failed.id as string, urn, failed.properties, failed.inputs as object)
      .then(
        () => {
          throw new Error("update succeeded; a failure was expected");
        },
        (e: unknown) => e as HostError,
      );
    expect(error).toBeInstanceOf(HostError);
    expectReasons(error);
    expect(engineText(error)).toContain("Worker error: model weights not found at /models/llama");
    // A plain error (no job exists: nothing to keep in state) is printed as its gRPC message.
    const plain = await host
      .create(urnFor("JobRun", "no-endpoint"), { endpointId: "missing", input: {} })
      .then(
        () => {
          throw new Error("create succeeded; a failure was expected");
        },
        (e: unknown) => e as HostError,
      );
    expect(plain.id).toBeUndefined();
    expect(engineText(plain)).toBe(plain.message);
    expect(engineText(plain)).toContain("could not submit a job to endpoint missing");
  });

  it("stores no output over 1 MB of JSON, says so, and still matches expect on the whole output", async () => {
    // Before: a 30 MB output was stored whole.
    const { outs } = await up("big-output", {
      endpointId: "big",
      input: { kb: 1_500 },
      expect: { output: { last: "end" } },
    });
    expect(outs.status).toBe("COMPLETED");
    expect(outs.passed).toBe(true);
    expect(outs.output).toBeUndefined();
    expect(outs.outputTruncated).toBe(true);
    expect(outs.outputBytes).toBeGreaterThan(1_500_000);
    expect(JSON.stringify(outs).length).toBeLessThan(100_000);
    const small = await up("small-output", { endpointId: "big", input: { kb: 2 } });
    expect(small.outs.output.last).toBe("end");
    expect(small.outs.outputTruncated).toBeUndefined();
    const mismatch = await upFails("big-output-mismatch", {
      endpointId: "big",
      input: { kb: 1_500 },
      expect: { output: { last: "start" } },
    });
    expect(mismatch.message).toContain('output.last: expected "start", got "end"');
    expect(mismatch.properties.outputTruncated).toBe(true);
    expect(mismatch.properties.output).toBeUndefined();
  });

  it("reports a job the service timed out by policy.executionTimeout", async () => {
    const error = await upFails("policy-timeout", {
      endpointId: "echo",
      input: { sleepMs: 30_000 },
      policy: { executionTimeout: LEAST_EXECUTION_TIMEOUT_MS },
    });
    expect(error.properties.status).toBe("TIMED_OUT");
    expect(error.message).toContain("ended TIMED_OUT");
    expect(error.message).toContain("executionTimeout");
  });

  it("cancels the remote job when timeoutMs expires and says so", async () => {
    const before = emu.stats().endpoints.echo?.cancelled ?? 0;
    const error = await upFails("deploy-timeout", {
      endpointId: "echo",
      input: { sleepMs: 60_000 },
      timeoutMs: 1_500,
    });
    expect(error.message).toContain("did not finish within timeoutMs (1500 ms)");
    expect(error.message).toContain("cancelled the job on the service");
    expect(error.properties.status).toBe("CANCELLED");
    expect(statuses(error.properties.timeline).at(-1)).toBe("CANCELLED");
    expect(emu.stats().endpoints.echo?.cancelled).toBe(before + 1);
    expect((await client.endpoint("echo").status(error.properties.jobId)).status).toBe("CANCELLED");
  });

  it("uses the service's retry on FAILED and succeeds, counting attempts", async () => {
    const { outs } = await up("retries", { endpointId: "flaky", input: {}, retries: 2 });
    expect(outs).toMatchObject({ status: "COMPLETED", attempts: 2, output: { ok: true } });
    expect(statuses(outs.timeline)).toEqual(expect.arrayContaining(["FAILED", "IN_QUEUE", "COMPLETED"]));
    expect(statuses(outs.timeline).indexOf("FAILED")).toBeLessThan(
      statuses(outs.timeline).lastIndexOf("COMPLETED"),
    );
  });

  it("passes when the output contains expect.output", async () => {
    const { outs } = await up("match", {
      endpointId: "echo",
      input: { output: { greeting: "hello", tokens: [1, 2], extra: true } },
      expect: { output: { greeting: "hello", tokens: [1, 2] } },
    });
    expect(outs.status).toBe("COMPLETED");
  });

  it("fails with a readable diff when the output does not contain expect.output", async () => {
    const error = await upFails("mismatch", {
      endpointId: "echo",
      input: { output: { greeting: "hullo", tokens: [1] } },
      expect: { output: { greeting: "hello", tokens: [1, 2] } },
    });
    expect(error.message).toContain('output.greeting: expected "hello", got "hullo"');
    expect(error.message).toContain("output.tokens: expected an array of 2 items, got an array of 1 item");
    expect(error.properties.status).toBe("COMPLETED");
  });

  it("runs in runsync mode with a sync job id", async () => {
    const { outs } = await up("runsync", { endpointId: "echo", input: { output: "done" }, mode: "runsync" });
    expect(outs.jobId).toMatch(/^sync-/);
    expect(outs).toMatchObject({ status: "COMPLETED", output: "done" });
  });

  // "keeps waiting after runsync answers before the job ends" is tested on a manual clock in
  // jobRunSubmission.test.ts: in real time it is a race between the runsync wait and the job.

  it("runs in run mode with an async job id", async () => {
    const { outs } = await up("run", { endpointId: "echo", input: { output: 1 }, mode: "run" });
    expect(outs.jobId).not.toMatch(/^sync-/);
    expect(outs.output).toBe(1);
  });

  it("captures the stream chunks with collectStream", async () => {
    const { outs } = await up("stream", {
      endpointId: "echo",
      input: { sleepMs: 200, stream: ["a", "b", { c: 3 }] },
      collectStream: true,
    });
    expect(outs.stream.map((chunk: { output: unknown }) => chunk.output)).toEqual(["a", "b", { c: 3 }]);
    expect(outs.streamTruncated).toBe(false);
  });

  it("bounds the captured stream at 1000 chunks and marks it truncated", async () => {
    const items = Array.from({ length: 1_100 }, (_, i) => i);
    const { outs } = await up("stream-bound", {
      endpointId: "echo",
      input: { stream: items },
      collectStream: true,
    });
    expect(outs.stream).toHaveLength(1_000);
    expect(outs.streamTruncated).toBe(true);
    expect(outs.status).toBe("COMPLETED");
  });

  it("re-runs the job in place when a trigger changes", async () => {
    const first = await up("trigger", { endpointId: "echo", input: {}, triggers: ["v1"] });
    const urn = first.urn;
    const same = await host.diff(first.id, urn, first.outs, {
      endpointId: "echo",
      input: {},
      triggers: ["v1"],
    });
    expect(same.changes).toBe(false);
    const news = { endpointId: "echo", input: {}, triggers: ["v2"] };
    const diff = await host.diff(first.id, urn, first.outs, news);
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    const { outs } = await host.update(first.id, urn, first.outs, news);
    expect(outs.jobId).not.toBe(first.outs.jobId);
    expect(outs.triggers).toEqual(["v2"]);
    expect(outs.status).toBe("COMPLETED");
  });

  it("re-runs a failed JobRun through update with the same id and unchanged arguments", async () => {
    toggleBroken = true;
    const failed = await upFails("rerun", { endpointId: "toggle", input: { n: 1 } });
    expect(failed.message).toContain("model weights not found");
    const urn = urnFor("JobRun", "rerun");
    const diff = await host.diff(failed.id as string, urn, failed.properties, failed.inputs as object);
    // The recorded verdict asks for the re-run itself: after `pulumi refresh` the engine no longer
    // remembers the partial failure, so diff must not report "no change".
    expect(failed.properties.passed).toBe(false);
    expect(diff.changes).toBe(true);
    toggleBroken = false;
    const { outs } = await host.update(failed.id as string, urn, failed.properties, failed.inputs as object);
    expect(outs.status).toBe("COMPLETED");
    expect(outs.passed).toBe(true);
    expect(outs.jobId).not.toBe(failed.properties.jobId);
    expect(outs.error).toBeUndefined();
  });

  it("keeps the recorded result on refresh once the service has expired the job", async () => {
    const { id, urn, outs } = await up("refresh", { endpointId: "echo", input: { output: { kept: true } } });
    const fresh = await host.read(id, urn, outs);
    expect(fresh).toMatchObject({ id, props: { status: "COMPLETED", output: { kept: true } } });
    await client.endpoint("echo").status(outs.jobId, { ttl: 1 }); // result expires 1 ms after completion
    await expect(client.endpoint("echo").status(outs.jobId)).rejects.toMatchObject({ status: 404 });
    const expired = await host.read(id, urn, outs);
    expect(expired.id).toBe(id);
    expect(expired.props).toMatchObject({ jobId: outs.jobId, status: "COMPLETED", output: { kept: true } });
  });

  it("cancels a still-running job on delete, and sends nothing for a finished one", async () => {
    const running = await upFails("delete-running", {
      endpointId: "echo",
      input: { sleepMs: 60_000 },
      timeoutMs: 1_000,
      cancelOnTimeout: false,
    });
    expect(running.message).toContain("left running on the service (cancelOnTimeout is false)");
    expect(running.properties.status).toMatch(/IN_QUEUE|IN_PROGRESS/);
    const urn = urnFor("JobRun", "delete-running");
    await host.delete(running.id as string, urn, running.properties);
    expect((await client.endpoint("echo").status(running.properties.jobId)).status).toBe("CANCELLED");

    const done = await up("delete-done", { endpointId: "echo", input: {} });
    const before = emu.stats().requests;
    await host.delete(done.id, done.urn, done.outs);
    expect(emu.stats().requests).toBe(before);
  });

  it("rejects bad arguments field by field in check, before any network call", async () => {
    const before = emu.stats().requests;
    const { failures } = await host.check(
      urnFor("JobRun", "bad"),
      {},
      {
        endpointId: "echo",
        input: [1, 2],
        webhook: "not a url",
        policy: { executionTimeout: 1_000, ttl: 999_999_999_999 },
        s3Config: secretValue({ ...S3, endpointUrl: "s3://bucket" }),
        mode: "fast",
        timeoutMs: -5,
        retries: 1.5,
        expect: { status: "DONE" },
      },
    );
    // A nested path names no property (the engine would print `{<nil>}`): its reason names it.
    const fields = failures.map((f) => f.property || (f.reason.split(" ")[0] as string).replace(/:$/, ""));
    expect(fields.sort()).toEqual([
      "expect.status",
      "input",
      "mode",
      "policy.executionTimeout",
      "policy.ttl",
      "retries",
      "s3Config.endpointUrl",
      "timeoutMs",
      "webhook",
    ]);
    expect(failures.find((f) => f.reason.startsWith("policy.ttl "))?.reason).toBe(
      "policy.ttl must be at most 604800000 ms (1 week)",
    );
    expect(emu.stats().requests).toBe(before);
  });

  it("accepts unknown values in a preview check", async () => {
    const { failures } = await host.check(
      urnFor("JobRun", "preview"),
      {},
      {
        endpointId: UNKNOWN,
        input: UNKNOWN,
        policy: { ttl: UNKNOWN },
      },
    );
    expect(failures).toEqual([]);
  });

  it("never puts the s3 accessSecret or the api key in __provider, outputs, errors or host stderr", async () => {
    const ok = await up("secrets-ok", {
      endpointId: "echo",
      input: { output: 1 },
      s3Config: secretValue(S3),
    });
    const bad = await upFails("secrets-bad", {
      endpointId: "echo",
      input: { fail: "x" },
      s3Config: secretValue(S3),
    });
    expect(ok.outs.s3ConfigDigest).toMatch(/^scrypt-n32768-r8-p1:[0-9a-f]{32}:[0-9a-f]{64}$/);
    const provider = await serializedProvider(inject("installedProjectDir"), "JobRun");
    const seen = [
      JSON.stringify(ok.outs),
      JSON.stringify(bad.properties),
      bad.message,
      host.stderr(),
      provider,
    ];
    for (const text of seen) {
      expect(text).not.toContain(S3.accessSecret);
      expect(text).not.toContain(emu.apiKey);
    }
    // s3Config unchanged -> no re-run; rotated secret -> re-run.
    const same = await host.diff(ok.id, ok.urn, ok.outs, {
      endpointId: "echo",
      input: { output: 1 },
      s3Config: S3,
    });
    expect(same.changes).toBe(false);
    const rotated = { ...S3, accessSecret: "rotated" };
    const diff = await host.diff(ok.id, ok.urn, ok.outs, {
      endpointId: "echo",
      input: { output: 1 },
      s3Config: rotated,
    });
    expect(diff.changes).toBe(true);
  });

  it("diffs, updates and deletes a state whose s3ConfigDigest 0.1.0 wrote (HMAC-SHA256)", async () => {
    const ok = await up("legacy-digest", {
      endpointId: "echo",
      input: { output: 2 },
      s3Config: secretValue(S3),
    });
    // 0.1.0's digest: HMAC-SHA256 keyed by a salt stored beside it, over the canonical JSON.
    const salt = Buffer.from("0123456789abcdef0123456789abcdef", "hex");
    const canonical = JSON.stringify(
      Object.fromEntries(Object.entries(S3).sort(([a], [b]) => a.localeCompare(b))),
    );
    const legacy = `hmac-sha256:${salt.toString("hex")}:${createHmac("sha256", salt).update(canonical).digest("hex")}`;
    const olds = { ...ok.outs, s3ConfigDigest: legacy };
    const news = { endpointId: "echo", input: { output: 2 }, s3Config: S3 };
    expect((await host.diff(ok.id, ok.urn, olds, news)).changes).toBe(false);
    const rotated = { ...news, s3Config: { ...S3, accessSecret: "rotated-secret-1" } };
    expect((await host.diff(ok.id, ok.urn, olds, rotated)).changes).toBe(true);
    const { outs } = await host.update(ok.id, ok.urn, olds, rotated);
    expect(outs.s3ConfigDigest).toMatch(/^scrypt-n32768-r8-p1:/);
    await host.delete(ok.id, ok.urn, outs);
  });

  it("logs status changes with elapsed time to the host's stderr", async () => {
    const { outs } = await up("progress", { endpointId: "echo", input: { sleepMs: 100 } });
    expect(host.stderr()).toMatch(
      new RegExp(`JobRun endpoint echo job ${outs.jobId}: COMPLETED after \\d+\\.\\d+ s`),
    );
  });
});

describe("JobRun secrets scan: everything the provider returns or throws, for every operation", () => {
  /** Every text the host sent back or printed during the scan's operations. */
  const texts: { what: string; text: string }[] = [];
  const record = (what: string, value: unknown) =>
    texts.push({ what, text: typeof value === "string" ? value : (JSON.stringify(value) ?? "") });
  const recordError = (what: string, error: HostError) => {
    record(`${what}: message`, error.message);
    record(`${what}: properties (gRPC details)`, error.properties);
    record(`${what}: reasons (gRPC details)`, error.reasons);
    record(`${what}: engine text`, engineText(error));
  };

  beforeAll(async () => {
    const s3Config = secretValue(LEAK_S3);
    // create: output, stream (collectStream), error; with s3Config and without (API key only)
    const output = await up("leak-output", { endpointId: "leaky", input: { where: "output" }, s3Config });
    record("create (output): outs", output.outs);
    const stream = await up("leak-stream", {
      endpointId: "leaky",
      input: { where: "stream" },
      s3Config,
      collectStream: true,
    });
    record("create (stream): outs", stream.outs);
    const failed = await upFails("leak-error", { endpointId: "leaky", input: { where: "error" }, s3Config });
    recordError("create (worker error)", failed);
    const expected = await up("leak-expected-failure", {
      endpointId: "leaky",
      input: { where: "error" },
      s3Config,
      expect: { status: "FAILED" },
    });
    record("create (expect FAILED): outs", expected.outs);
    const noS3 = await up("leak-api-key", {
      endpointId: "leaky",
      input: { where: "output", apiKeyOnly: true },
    });
    record("create (no s3Config): outs", noS3.outs);
    // update: a partial failure again
    const urn = urnFor("JobRun", "leak-error");
    const updated = await host
      .update(failed.id as string, urn, failed.properties, failed.inputs as object)
      .then(
        () => undefined,
        (e: unknown) => e as HostError,
      );
    expect(updated).toBeInstanceOf(HostError);
    recordError("update (worker error)", updated as HostError);
    // read (refresh)
    for (const [name, made] of [
      ["leak-output", output],
      ["leak-api-key", noS3],
      ["leak-expected-failure", expected],
    ] as const) {
      const read = await host.read(made.id, urnFor("JobRun", name), made.outs);
      record(`read ${name}: props`, read.props);
    }
    const readFailed = await host.read(failed.id as string, urn, failed.properties);
    record("read leak-error: props", readFailed.props);
    // delete
    await host.delete(output.id, output.urn, output.outs);
    await host.delete(failed.id as string, urn, failed.properties);
    record("host stderr", host.stderr());
    record("__provider", await serializedProvider(inject("installedProjectDir"), "JobRun"));
  }, 120_000);

  const leaks = (forms: readonly string[]) => {
    const found: string[] = [];
    for (const [secretName, secret] of [
      ["s3 accessSecret", LEAK_S3.accessSecret],
      ["API key", emu.apiKey],
    ] as const) {
      const all = secretForms(secret);
      for (const form of forms) {
        const needle = all[form] as string;
        for (const { what, text } of texts)
          if (text.includes(needle)) found.push(`${secretName} (${form}) in ${what}`);
      }
    }
    return found;
  };

  it("the scan saw the worker's echoes (it is not vacuous)", () => {
    expect(texts.length).toBeGreaterThan(15);
    expect(texts.some(({ text }) => text.includes("[redacted]"))).toBe(true);
  });

  it("finds no secret in raw or JSON-escaped form anywhere", () => {
    expect(leaks(["raw", "json"])).toEqual([]);
  });

  // The client's one redaction module also covers the URL-encoded, form-encoded and HTML-escaped forms.
  it("finds no secret in URL-encoded, form-encoded or HTML-escaped form anywhere", () => {
    expect(leaks(["url", "form", "html"])).toEqual([]);
  });
});

describe("JobRun detection latency and request count (measured, not asserted on time)", () => {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] as number;
  };

  // A job done about when its long poll starts, and one plainly still running then (a long poll
  // waits up to 90 s, so any longer job costs the same requests; 400 ms, not 1 s, saves real time).
  for (const ms of [100, 400]) {
    it(`notices a ${ms} ms job with at most 3 job requests, reads the workers twice and the endpoint once`, async () => {
      const latencies: number[] = [];
      const jobRequests: number[] = [];
      const restReads: number[] = [];
      for (let i = 0; i < 5; i++) {
        const before = emu.stats().requestsByInterface;
        const { outs } = await up(`latency-${ms}-${i}`, { endpointId: "timed", input: { ms } });
        const after = emu.stats().requestsByInterface;
        jobRequests.push(after.jobs - before.jobs);
        restReads.push(after.management - before.management);
        latencies.push(Date.parse(outs.completedAt) - (finishedAt.get(outs.jobId) as number));
        expect(outs.endpointVersion).toBe(1);
      }
      console.log(
        `JobRun ${ms} ms job: detection latency median ${median(latencies)} ms (${latencies.join(", ")}); ` +
          `job requests per run ${jobRequests.join(", ")}; REST reads per run ${restReads.join(", ")}`,
      );
      // The job API: submission and long polls. REST: the rollout wait (nothing rolling out) reads
      // the workers before submitting and after the job, to learn which release ran it; the
      // endpoint is read once for its env values, redacted from what the run records.
      for (const count of jobRequests) expect(count).toBeLessThanOrEqual(3);
      for (const count of restReads) expect(count).toBe(3);
    });
  }
});
