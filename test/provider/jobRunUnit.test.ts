import { createHmac, scryptSync } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  JobWaitTimeoutError,
  ResponseValidationError,
  ValidationError,
} from "../../src/client/errors";
import { UNKNOWN } from "../../src/provider/common/unknown";
import { changedArgs, diffJobRun } from "../../src/provider/jobRun/diff";
import { resolveJobRunArgs } from "../../src/provider/smokeTestJob/jobArgs";
import { checkJobRunArgs } from "../../src/provider/smokeTestJob/jobArgsCheck";
import { findMismatches, formatMismatches, matchesSubset } from "../../src/provider/smokeTestJob/match";
import { buildOutputs } from "../../src/provider/smokeTestJob/outputs";
import {
  executeJobRun,
  failureMessage,
  formatTimeline,
  JobRunSubmitError,
  judge,
  resendable,
} from "../../src/provider/smokeTestJob/run";
import { canonicalJson, digestS3Config, s3ConfigMatches } from "../../src/provider/smokeTestJob/s3Digest";

const s3 = {
  accessId: "AKID",
  accessSecret: "s3-very-secret",
  bucketName: "b",
  endpointUrl: "https://s3.example.com",
};

describe("expect.output deep subset matching", () => {
  it("accepts an output that holds every expected key, ignoring extra keys", () => {
    expect(matchesSubset({ a: 1, b: { c: "x" } }, { a: 1, b: { c: "x", d: 2 }, e: [] })).toBe(true);
  });

  it("matches arrays item by item and requires the same length", () => {
    expect(matchesSubset([{ a: 1 }, 2], [{ a: 1, z: 0 }, 2])).toBe(true);
    expect(matchesSubset([1, 2], [1, 2, 3])).toBe(false);
  });

  it('compares scalars strictly: 1 does not match "1", null matches only null', () => {
    expect(matchesSubset({ n: 1 }, { n: "1" })).toBe(false);
    expect(matchesSubset({ n: null }, { n: null })).toBe(true);
    expect(matchesSubset({ n: null }, {})).toBe(false);
  });

  it("reports each differing path with what was expected and what was found", () => {
    const result = findMismatches(
      { text: "hello", meta: { ok: true }, items: [1, 2] },
      { text: "hullo", meta: {}, items: [1] },
    );
    expect(formatMismatches(result)).toBe(
      [
        '  output.text: expected "hello", got "hullo"',
        "  output.meta.ok: expected true, got missing",
        "  output.items: expected an array of 2 items, got an array of 1 item",
      ].join("\n"),
    );
    expect(result.total).toBe(3);
  });

  it("names a type change rather than only the values", () => {
    const { mismatches } = findMismatches({ a: { b: 1 } }, { a: "str" });
    expect(mismatches[0]).toEqual({ path: "output.a", expected: '{"b":1}', actual: 'a string: "str"' });
  });

  it("quotes keys that are not identifiers in paths", () => {
    const { mismatches } = findMismatches({ "content-type": "a" }, { "content-type": "b" });
    expect(mismatches[0]?.path).toBe('output["content-type"]');
  });

  it("hides values when secretOutput is set", () => {
    const text = formatMismatches(findMismatches({ token: "expected-secret" }, { token: "actual-secret" }), {
      hideValues: true,
    });
    expect(text).toContain("output.token: differs");
    expect(text).not.toContain('secret"');
    expect(text).not.toContain("actual-secret");
  });

  it("caps the listing and says how many more differences there were", () => {
    const expected = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
    const result = findMismatches(expected, {});
    expect(result.mismatches).toHaveLength(20);
    expect(formatMismatches(result)).toContain("... and 10 more");
  });
});

describe("JobRun argument checks (no network)", () => {
  const valid = { endpointId: "echo", input: { prompt: "hi" } };

  it("accepts minimal valid arguments", () => {
    expect(checkJobRunArgs(valid)).toEqual([]);
  });

  it("names the field and the rule for every job-request field, using the client's wording", () => {
    const failures = checkJobRunArgs({
      endpointId: "",
      input: "not an object",
      webhook: "ftp://x",
      policy: { executionTimeout: 5000, ttl: 5 },
      s3Config: { accessId: "a", accessSecret: "", bucketName: "b", endpointUrl: "nope" },
      mode: "async",
      timeoutMs: 0,
      retries: -1,
      expect: { status: "DONE" },
      triggers: "x",
    });
    const byProperty = Object.fromEntries(failures.map((f) => [f.property, f.reason]));
    expect(byProperty).toMatchObject({
      endpointId: expect.stringContaining("endpointId must be a non-empty endpoint id"),
      input: "input must be a JSON object",
      webhook: "webhook must be an http(s) URL",
      "policy.executionTimeout": "policy.executionTimeout must be greater than 5000 ms",
      "policy.ttl": "policy.ttl must be at least 10000 ms",
      "s3Config.accessSecret": "s3Config.accessSecret must not be empty",
      "s3Config.endpointUrl": "s3Config.endpointUrl must be an http(s) URL",
      mode: 'mode must be "run" or "runsync"',
      timeoutMs: "timeoutMs must be at least 1 ms",
      retries: "retries must be at least 0",
      "expect.status": "expect.status must be one of COMPLETED, FAILED, CANCELLED, TIMED_OUT",
      triggers: "triggers must be an array of values",
    });
  });

  it("reports a missing input and endpointId as required", () => {
    const failures = checkJobRunArgs({});
    expect(failures.map((f) => f.property).sort()).toEqual(["endpointId", "input"]);
    expect(failures.find((f) => f.property === "input")?.reason).toBe(
      "input is required: the job input, a JSON object (or give http instead to probe a LOAD_BALANCER endpoint)",
    );
  });

  it("rejects a typo in an argument name, listing the allowed names", () => {
    const [failure] = checkJobRunArgs({ ...valid, timeout: 5 });
    // No property: the engine would print the typo'd value whole, and it may be a secret.
    expect(failure?.property).toBe("");
    expect(failure?.reason).toContain("timeout is not a JobRun argument");
    expect(failure?.reason).toContain("timeoutMs");
  });

  it("rejects an unknown field inside policy by its full path", () => {
    const [failure] = checkJobRunArgs({ ...valid, policy: { ttll: 10_000 } });
    expect(failure?.property).toBe("policy.ttll");
  });

  it("rejects collectStream with runsync mode", () => {
    const [failure] = checkJobRunArgs({ ...valid, mode: "runsync", collectStream: true });
    expect(failure?.property).toBe("collectStream");
  });

  it("does not judge values that are unknown during a preview", () => {
    expect(
      checkJobRunArgs({
        endpointId: UNKNOWN,
        input: UNKNOWN,
        policy: { ttl: UNKNOWN },
        s3Config: UNKNOWN,
        mode: UNKNOWN,
        collectStream: true,
        triggers: [UNKNOWN],
        __provider: UNKNOWN,
      }),
    ).toEqual([]);
  });

  it("never puts the s3 accessSecret in a failure", () => {
    const failures = checkJobRunArgs({ ...valid, s3Config: { ...s3, endpointUrl: 3, extra: 1 } });
    expect(failures.length).toBeGreaterThan(0);
    expect(JSON.stringify(failures)).not.toContain(s3.accessSecret);
  });

  it("applies the documented defaults", () => {
    expect(resolveJobRunArgs(valid)).toMatchObject({
      mode: "run",
      timeoutMs: 600_000,
      cancelOnTimeout: true,
      expect: { status: "COMPLETED" },
      retries: 0,
      collectStream: false,
      secretOutput: false,
    });
  });
});

describe("JobRun diff and recorded outputs", () => {
  const inputs = { endpointId: "echo", input: { a: 1, b: [1, 2] }, s3Config: s3, triggers: ["v1"] };
  let outs: Record<string, unknown>;
  beforeAll(async () => {
    outs = {
      ...(await buildOutputs(inputs, { attempts: 1, timeline: [], jobId: "j1", status: "COMPLETED" })),
    };
  });

  it("records a salted scrypt digest of s3Config, never the secret", async () => {
    expect(JSON.stringify(outs)).not.toContain(s3.accessSecret);
    expect(outs).not.toHaveProperty("s3Config");
    expect(outs.s3ConfigDigest).toMatch(/^scrypt-n32768-r8-p1:[0-9a-f]{32}:[0-9a-f]{64}$/);
    expect(await digestS3Config(s3)).not.toBe(await digestS3Config(s3));
    expect(await s3ConfigMatches(outs.s3ConfigDigest, { ...s3 })).toBe(true);
    expect(await s3ConfigMatches(outs.s3ConfigDigest, { ...s3, accessSecret: "rotated" })).toBe(false);
    expect(await s3ConfigMatches(outs.s3ConfigDigest, undefined)).toBe(false);
  });

  it("the scrypt digest is the one of scrypt(N=2^15, r=8, p=1) over the canonical JSON with the stored salt", async () => {
    const [, saltHex, key] = String(outs.s3ConfigDigest).split(":");
    const expected = scryptSync(canonicalJson(s3), Buffer.from(saltHex ?? "", "hex"), 32, {
      N: 2 ** 15,
      r: 8,
      p: 1,
      maxmem: 64 * 1024 * 1024,
    }).toString("hex");
    expect(key).toBe(expected);
  });

  it("still recognises a 0.1.0 digest (hmac-sha256) of the same s3Config, so old states find no change", async () => {
    const salt = Buffer.from("00112233445566778899aabbccddeeff", "hex");
    const legacy = `hmac-sha256:${salt.toString("hex")}:${createHmac("sha256", salt).update(canonicalJson(s3)).digest("hex")}`;
    expect(await s3ConfigMatches(legacy, { ...s3 })).toBe(true);
    expect(await s3ConfigMatches(legacy, { ...s3, accessSecret: "rotated" })).toBe(false);
    const old = { ...outs, s3ConfigDigest: legacy, passed: true };
    expect((await diffJobRun(old, { ...inputs })).changes).toBe(false);
    expect(await s3ConfigMatches("md5:00:00", { ...s3 })).toBe(false);
  });

  it("finds no change for the same arguments in another key order, ignoring __provider", async () => {
    const news = {
      triggers: ["v1"],
      input: { b: [1, 2], a: 1 },
      s3Config: { ...s3 },
      endpointId: "echo",
      __provider: "new code",
    };
    expect(await diffJobRun({ ...outs, __provider: "old code" }, news)).toEqual({
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("re-runs in place (no replacement) when a trigger, the input or the s3 secret changes", async () => {
    expect(await changedArgs(outs, { ...inputs, triggers: ["v2"] })).toEqual(["triggers"]);
    expect(await changedArgs(outs, { ...inputs, input: { a: 2, b: [1, 2] } })).toEqual(["input"]);
    expect(await changedArgs(outs, { ...inputs, s3Config: { ...s3, accessSecret: "rotated" } })).toEqual([
      "s3Config",
    ]);
    const diff = await diffJobRun(outs, { ...inputs, retries: 2 });
    expect(diff).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
  });

  it("counts an argument that is unknown in a preview as a change", async () => {
    expect(await changedArgs(outs, { ...inputs, input: { a: UNKNOWN, b: [1, 2] } })).toEqual(["input"]);
  });

  it("serializes canonically: sorted keys, undefined dropped", () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: 2 } })).toBe('{"a":{"c":2},"b":1}');
  });
});

describe("JobRun verdicts and failure text", () => {
  const args = resolveJobRunArgs({ endpointId: "echo", input: {} });
  const timeline = [
    { status: "IN_QUEUE", atMs: 5 },
    { status: "IN_PROGRESS", atMs: 20 },
    { status: "FAILED", atMs: 130 },
  ];

  it("formats the timeline with elapsed seconds", () => {
    expect(formatTimeline(timeline)).toBe("IN_QUEUE 0.01 s -> IN_PROGRESS 0.02 s -> FAILED 0.13 s");
    expect(formatTimeline([])).toBe("(no status seen)");
  });

  it("fails a FAILED job with endpoint, job id, status, worker error, timeline and a hint", () => {
    const message = judge(args, {
      jobId: "job-1",
      status: "FAILED",
      error: "CUDA out of memory",
      attempts: 1,
      timeline,
    });
    expect(message).toContain("endpoint echo, job job-1");
    expect(message).toContain("ended FAILED, expected COMPLETED");
    expect(message).toContain("Worker error: CUDA out of memory");
    expect(message).toContain("Timeline: IN_QUEUE 0.01 s -> IN_PROGRESS 0.02 s -> FAILED 0.13 s");
    expect(message).toMatch(/Hint: .*worker/);
  });

  it("passes a job that ends in the expected status with a matching output", () => {
    const withOutput = resolveJobRunArgs({ endpointId: "echo", input: {}, expect: { output: { ok: true } } });
    expect(
      judge(withOutput, { status: "COMPLETED", output: { ok: true, extra: 1 }, attempts: 1, timeline }),
    ).toBeUndefined();
  });

  it("passes a job expected to fail when it fails", () => {
    const failing = resolveJobRunArgs({ endpointId: "echo", input: {}, expect: { status: "FAILED" } });
    expect(judge(failing, { status: "FAILED", attempts: 1, timeline })).toBeUndefined();
  });

  it("fails an output mismatch with the diff", () => {
    const withOutput = resolveJobRunArgs({ endpointId: "echo", input: {}, expect: { output: { ok: true } } });
    const message = judge(withOutput, { status: "COMPLETED", output: { ok: false }, attempts: 1, timeline });
    expect(message).toContain("output.ok: expected true, got false");
    expect(message).toContain("update expect.output");
  });

  it("builds one failure text shape for every cause", () => {
    expect(failureMessage(args, { attempts: 0, timeline: [] }, "what", "hint")).toBe(
      "JobRun failed on endpoint echo, job (none): what\nStatus: unknown; attempts: 0\nTimeline: (no status seen)\nHint: hint",
    );
  });
});

describe("submission ambiguity", () => {
  const api = (status: number) => APIError.from({ status, method: "POST", path: "/v2/echo/run" });

  it("sends again only after a passing refusal the service did not act on: 429, 503, a connection never opened", () => {
    expect(resendable(api(429))).toBe(true);
    expect(resendable(api(503))).toBe(true);
    expect(resendable(new APIConnectionError("refused", { notSent: true }))).toBe(true);
  });

  it("never sends again after a 500, a reset, a timeout, an abort on the wire or an unreadable answer", () => {
    expect(resendable(api(500))).toBe(false);
    expect(resendable(new APIConnectionError("reset"))).toBe(false);
    expect(resendable(new APITimeoutError("timeout", { notSent: true }))).toBe(false);
    expect(resendable(new APIUserAbortError("aborted", { sent: true }))).toBe(false);
    expect(resendable(new ResponseValidationError("bad body"))).toBe(false);
  });

  it("does not send again a request the service refused for good (4xx) or the client refused to send", () => {
    expect(resendable(api(400))).toBe(false);
    expect(resendable(api(401))).toBe(false);
    expect(resendable(new ValidationError("too large", []))).toBe(false);
  });
});

/** A JobRun on an endpoint whose client is real but whose server does not exist (127.0.0.1:1). */
const offlineEndpoint = () =>
  new RunpodClient({ apiKey: "unit-key", serverlessUrl: "http://127.0.0.1:1", maxRetries: 0 }).endpoint(
    "ep1",
  );

async function submitFailure(args: Parameters<typeof resolveJobRunArgs>[0], endpoint: unknown) {
  const error = await executeJobRun(resolveJobRunArgs(args), {
    endpoint: endpoint as Parameters<typeof executeJobRun>[1]["endpoint"],
    log: () => {},
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobRunSubmitError);
  return error as JobRunSubmitError;
}

describe("JobRun submission failures say whether a job may exist", () => {
  it("says no job was created when the client refuses an 11 MB input before sending it", async () => {
    const input = { blob: "x".repeat(11 * 1_000_000) };
    const error = await submitFailure({ endpointId: "ep1", input, timeoutMs: 60_000 }, offlineEndpoint());
    expect(error.ambiguous).toBe(false);
    expect(error.message).toContain("No job was created");
    expect(error.message).toContain("the service accepts at most 10 MB");
    expect(error.message).not.toContain("may or may not");
  });

  it("says no job was created when timeoutMs expires while the submission waits for a rate-limit slot", async () => {
    // What the client throws when the caller's signal fires in its rate limiter: nothing was sent.
    const endpoint = {
      id: "ep1",
      run: (_body: unknown, options: { signal: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          options.signal.addEventListener("abort", () =>
            reject(
              new APIUserAbortError("Request aborted while waiting for a rate-limit slot", { sent: false }),
            ),
          );
        }),
    };
    const error = await submitFailure({ endpointId: "ep1", input: {}, timeoutMs: 20 }, endpoint);
    expect(error.ambiguous).toBe(false);
    expect(error.message).toContain("the deadline passed while POST /run waited to be sent");
    expect(error.message).toContain("No job was created");
    expect(error.message).not.toContain("may or may not");
  });

  it("says the job may exist when timeoutMs expires while POST /run is on the wire", async () => {
    const endpoint = {
      id: "ep1",
      run: (_body: unknown, options: { signal: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          options.signal.addEventListener("abort", () =>
            reject(new APIUserAbortError("POST /run aborted by the caller's signal", { sent: true })),
          );
        }),
    };
    const error = await submitFailure({ endpointId: "ep1", input: {}, timeoutMs: 20 }, endpoint);
    expect(error.ambiguous).toBe(true);
    expect(error.message).toContain("expired while POST /run was in flight");
  });
});

describe("JobRun check of the job request's size", () => {
  const big = (mb: number) => ({ blob: "x".repeat(mb * 1_000_000) });

  it("rejects an input over 10 MB in run mode as a failure of input", () => {
    const failures = checkJobRunArgs({ endpointId: "ep1", input: big(11) });
    expect(failures).toHaveLength(1);
    expect(failures[0]?.property).toBe("input");
    expect(failures[0]?.reason).toMatch(
      /mode "run" accepts at most 10 MB \(10000000 bytes\), mode "runsync" 20 MB/,
    );
  });

  it("accepts the same input in runsync mode, and rejects one over 20 MB there", () => {
    expect(checkJobRunArgs({ endpointId: "ep1", input: big(11), mode: "runsync" })).toEqual([]);
    const failures = checkJobRunArgs({ endpointId: "ep1", input: big(21), mode: "runsync" });
    expect(failures.map((f) => f.property)).toEqual(["input"]);
    expect(failures[0]?.reason).toContain('mode "runsync" accepts at most 20 MB');
  });

  it("applies the larger limit while mode is unknown (preview)", () => {
    const failures = checkJobRunArgs({ endpointId: "ep1", input: big(11), mode: UNKNOWN });
    expect(failures).toEqual([]);
  });
});

describe("JobRun stream capture when the JobRun stops waiting", () => {
  it("marks a stream cut by the deploy's timeout as truncated, keeping the chunks read", async () => {
    let chunkTaken!: () => void;
    const taken = new Promise<void>((resolve) => {
      chunkTaken = resolve;
    });
    const endpoint = {
      id: "ep1",
      run: async () => ({ id: "job-1", status: "IN_QUEUE" }),
      waitForJob: async () => {
        await taken;
        throw new JobWaitTimeoutError("timeoutMs expired", { jobId: "job-1", lastStatus: undefined });
      },
      async *stream(_jobId: string, options: { signal: AbortSignal }) {
        yield { output: "first words" };
        chunkTaken();
        await new Promise((_resolve, reject) => options.signal.addEventListener("abort", reject));
      },
    };
    const outcome = await executeJobRun(
      resolveJobRunArgs({ endpointId: "ep1", input: {}, collectStream: true, cancelOnTimeout: false }),
      { endpoint: endpoint as unknown as Parameters<typeof executeJobRun>[1]["endpoint"], log: () => {} },
    );
    expect(outcome.failure).toContain("did not finish within timeoutMs");
    expect(outcome.result.stream).toEqual([{ output: "first words" }]);
    expect(outcome.result.streamTruncated).toBe(true);
  });
});
