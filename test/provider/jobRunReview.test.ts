/**
 * JobRun behaviours around failed and unfinished runs: the verdict kept across refresh, runsync
 * past the deadline, an ambiguous /retry, the previous run's job on update, the bounded cancel,
 * and the API key kept out of errors. Transport behaviour runs against scripted HTTP servers on
 * 127.0.0.1; pure logic against fakes.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { APIConnectionError, APIError, JobWaitTimeoutError } from "../../src/client/errors";
import { recordedRunPassed } from "../../src/provider/jobRun/diff";
import {
  contextFromSettings,
  createJobRun,
  diffJobRun,
  type LifecycleContext,
  updateJobRun,
} from "../../src/provider/jobRun/operations";
import { resolveJobRunArgs } from "../../src/provider/smokeTestJob/jobArgs";
import { checkJobRunArgs } from "../../src/provider/smokeTestJob/jobArgsCheck";
import { buildOutputs } from "../../src/provider/smokeTestJob/outputs";
import {
  CANCEL_NOT_CONFIRMED,
  executeJobRun,
  MIN_RUNSYNC_TIMEOUT_MS,
} from "../../src/provider/smokeTestJob/run";

type Endpoint = Parameters<typeof executeJobRun>[1]["endpoint"];
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A scripted serverless API on 127.0.0.1 and a client for it; `calls` lists `METHOD /path`. */
async function scripted(handler: Handler) {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    calls.push(`${req.method} ${url.pathname}`);
    handler(req, res, url);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const client = new RunpodClient({
    apiKey: "review-key",
    restUrl: `http://127.0.0.1:${port}/v1`,
    serverlessUrl: `http://127.0.0.1:${port}`,
    rateLimits: false,
  });
  return { calls, endpoint: client.endpoint("e") as unknown as Endpoint };
}

const json = (res: http.ServerResponse, body: unknown, status = 200) => {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify(body));
};

describe("a failed run is re-run on the next up, also after refresh dropped the partial failure", () => {
  const inputs = { endpointId: "echo", input: { a: 1 } };
  const recorded = async (result: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    ...(await buildOutputs({ ...inputs, ...extra }, { attempts: 1, timeline: [], jobId: "j1", ...result })),
  });

  it("asks for an update with unchanged arguments when the recorded verdict is passed: false", async () => {
    const outs = await buildOutputs(
      inputs,
      { attempts: 1, timeline: [], jobId: "j1", status: "FAILED" },
      false,
    );
    expect(outs.passed).toBe(false);
    expect((await diffJobRun({ ...outs }, inputs)).changes).toBe(true);
    const passed = await buildOutputs(
      inputs,
      { attempts: 1, timeline: [], jobId: "j1", status: "COMPLETED" },
      true,
    );
    expect((await diffJobRun({ ...passed }, inputs)).changes).toBe(false);
  });

  it("judges states recorded before `passed` existed from their status, output and expect", async () => {
    expect(recordedRunPassed(await recorded({ status: "COMPLETED" }))).toBe(true);
    expect(recordedRunPassed(await recorded({ status: "FAILED" }))).toBe(false);
    expect(recordedRunPassed(await recorded({ status: "IN_PROGRESS" }))).toBe(false);
    expect(recordedRunPassed(await recorded({ status: "FAILED" }, { expect: { status: "FAILED" } }))).toBe(
      true,
    );
    const wanted = { expect: { output: { ok: true } } };
    expect(recordedRunPassed(await recorded({ status: "COMPLETED", output: { ok: false } }, wanted))).toBe(
      false,
    );
    expect(recordedRunPassed(await recorded({ status: "COMPLETED", output: { ok: true } }, wanted))).toBe(
      true,
    );
    expect((await diffJobRun(await recorded({ status: "TIMED_OUT" }), inputs)).changes).toBe(true);
  });

  it("records passed: false in the partial failure and passed: true on success", async () => {
    let status = "FAILED";
    const endpoint = {
      id: "echo",
      // A COMPLETED job needs an output: one without fails (expect.allowErrorOutput).
      run: async () => ({ id: "j1", status, output: { ok: true } }),
    } as unknown as Endpoint;
    const ctx: LifecycleContext = { endpoint: () => endpoint, log: () => {} };
    const error = (await createJobRun(ctx, inputs).catch((e: unknown) => e)) as {
      properties: { passed: unknown };
    };
    expect(error.properties.passed).toBe(false);
    status = "COMPLETED";
    const { outs } = await createJobRun(ctx, inputs);
    expect(outs.passed).toBe(true);
  });
});

describe("runsync and the deadline", () => {
  it(`check rejects mode runsync with timeoutMs under ${MIN_RUNSYNC_TIMEOUT_MS} ms, naming the field`, () => {
    const failures = checkJobRunArgs({ endpointId: "e", input: {}, mode: "runsync", timeoutMs: 1000 });
    expect(failures.map((f) => f.property)).toEqual(["timeoutMs"]);
    expect(failures[0]?.reason).toContain(`at least ${MIN_RUNSYNC_TIMEOUT_MS} ms with mode "runsync"`);
    expect(checkJobRunArgs({ endpointId: "e", input: {}, mode: "run", timeoutMs: 1000 })).toEqual([]);
    expect(
      checkJobRunArgs({ endpointId: "e", input: {}, mode: "runsync", timeoutMs: MIN_RUNSYNC_TIMEOUT_MS }),
    ).toEqual([]);
  });

  it("keeps the job id of a runsync answer that arrives after the deadline, and cancels the job by id", async () => {
    // The service holds the runsync request past its wait (and past timeoutMs) before answering.
    const { calls, endpoint } = await scripted((req, res, url) => {
      if (url.pathname.endsWith("/runsync")) {
        const wait = Number(url.searchParams.get("wait"));
        req.resume();
        setTimeout(() => json(res, { id: "sync-1", status: "IN_PROGRESS" }), wait + 1500);
        return;
      }
      if (url.pathname.includes("/cancel/")) return json(res, { id: "sync-1", status: "CANCELLED" });
      json(res, { id: "sync-1", status: "IN_PROGRESS" });
    });
    const outcome = await executeJobRun(
      resolveJobRunArgs({ endpointId: "e", input: {}, mode: "runsync", timeoutMs: MIN_RUNSYNC_TIMEOUT_MS }),
      { endpoint, log: () => {} },
    );
    expect(outcome.result.jobId).toBe("sync-1");
    expect(outcome.result.status).toBe("CANCELLED");
    expect(calls).toContain("POST /v2/e/cancel/sync-1");
    expect(outcome.failure).toContain("did not finish within timeoutMs");
  });
});

describe("an ambiguous /retry", () => {
  it("reads the job's status, keeps waiting for the re-queued job, then cancels it at the deadline", async () => {
    let requeued = false;
    const { calls, endpoint } = await scripted((req, res, url) => {
      if (url.pathname.endsWith("/run")) return json(res, { id: "j1", status: "FAILED", error: "boom" });
      if (url.pathname.includes("/retry/")) {
        // Acted on, then the connection is reset before an answer.
        requeued = true;
        req.resume();
        req.on("end", () => req.socket.destroy());
        return;
      }
      if (url.pathname.includes("/cancel/")) return json(res, { id: "j1", status: "CANCELLED" });
      const status = requeued ? "IN_PROGRESS" : "FAILED";
      if (url.pathname.includes("/status-sync/")) {
        setTimeout(() => json(res, { id: "j1", status }), 200);
        return;
      }
      json(res, { id: "j1", status });
    });
    const outcome = await executeJobRun(
      resolveJobRunArgs({ endpointId: "e", input: {}, retries: 1, timeoutMs: 1500 }),
      { endpoint, log: () => {} },
    );
    expect(requeued).toBe(true);
    expect(outcome.result.attempts).toBe(2);
    expect(outcome.result.status).toBe("CANCELLED");
    expect(calls).toContain("GET /v2/e/status/j1");
    expect(calls).toContain("POST /v2/e/cancel/j1");
    expect(outcome.failure).toBeDefined();
  });

  it("records an unknown (non-terminal) status when the status cannot be read either", async () => {
    const endpoint = {
      id: "e",
      run: async () => ({ id: "j1", status: "FAILED" }),
      retry: async () => {
        throw new APIConnectionError("reset mid-request");
      },
      status: async () => {
        throw new APIConnectionError("reset mid-request");
      },
    } as unknown as Endpoint;
    const outcome = await executeJobRun(resolveJobRunArgs({ endpointId: "e", input: {}, retries: 1 }), {
      endpoint,
      log: () => {},
    });
    expect(outcome.result.status).toBe("UNKNOWN");
    expect(outcome.failure).toContain("may or may not have re-queued it");
  });
});

describe("update and the previous run's unfinished job", () => {
  const inputs = { endpointId: "e", input: {} };
  const olds = async (extra: Record<string, unknown> = {}) =>
    (await buildOutputs(
      { ...inputs, ...extra },
      { attempts: 1, timeline: [], jobId: "old-job", status: "IN_PROGRESS" },
      false,
    )) as unknown as Record<string, unknown>;

  function fakeEndpoint(cancel: () => Promise<unknown>) {
    const calls: string[] = [];
    const endpoint = {
      id: "e",
      status: async (id: string) => {
        calls.push(`status ${id}`);
        return { id, status: "IN_PROGRESS" };
      },
      cancel: async (id: string, options: { signal?: AbortSignal; maxRetries?: number }) => {
        calls.push(
          `cancel ${id} bounded=${options?.signal instanceof AbortSignal} retries=${options?.maxRetries}`,
        );
        return cancel();
      },
      run: async () => {
        calls.push("run");
        // With an output: a COMPLETED job without one fails (expect.allowErrorOutput).
        return { id: "new-job", status: "COMPLETED", output: { ok: true } };
      },
    } as unknown as Endpoint;
    return { calls, endpoint };
  }

  it("cancels the old job (bounded) before submitting the new one", async () => {
    const { calls, endpoint } = fakeEndpoint(async () => ({ id: "old-job", status: "CANCELLED" }));
    const { outs } = await updateJobRun(
      { endpoint: () => endpoint, log: () => {} },
      "rid",
      inputs,
      await olds(),
    );
    expect(calls).toEqual(["status old-job", "cancel old-job bounded=true retries=1", "run"]);
    expect(outs.jobId).toBe("new-job");
  });

  it("leaves it running with cancelOnTimeout false, and says so", async () => {
    const { calls, endpoint } = fakeEndpoint(async () => ({}));
    const lines: string[] = [];
    await updateJobRun(
      { endpoint: () => endpoint, log: (l) => lines.push(l) },
      "rid",
      inputs,
      await olds({ cancelOnTimeout: false }),
    );
    expect(calls).toEqual(["status old-job", "run"]);
    expect(lines.join("\n")).toContain("left running (cancelOnTimeout is false)");
  });

  it("fails before submitting when the old job cannot be cancelled", async () => {
    const { calls, endpoint } = fakeEndpoint(async () => {
      throw new APIConnectionError("reset");
    });
    const error = await updateJobRun(
      { endpoint: () => endpoint, log: () => {} },
      "rid",
      inputs,
      await olds(),
    ).catch((e: unknown) => e as Error);
    expect((error as Error).message).toContain("could not cancel the previous run's job old-job");
    expect(calls).not.toContain("run");
  });
});

describe("the cancel on timeout", () => {
  it("is bounded as a whole (a signal, one retry) and records an unconfirmed cancel", async () => {
    const seen: Array<{ signal?: AbortSignal; maxRetries?: number; timeoutMs?: number }> = [];
    const endpoint = {
      id: "e",
      run: async () => ({ id: "j1", status: "IN_QUEUE" }),
      waitForJob: async () => {
        throw new JobWaitTimeoutError("timeoutMs expired", { jobId: "j1", lastStatus: undefined });
      },
      cancel: async (_id: string, options: { signal?: AbortSignal; maxRetries?: number }) => {
        seen.push(options);
        throw new APIConnectionError("reset");
      },
    } as unknown as Endpoint;
    const outcome = await executeJobRun(resolveJobRunArgs({ endpointId: "e", input: {} }), {
      endpoint,
      log: () => {},
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(seen[0]?.maxRetries).toBe(1);
    expect(outcome.result.timeline.map((e) => e.status)).toContain(CANCEL_NOT_CONFIRMED);
    expect(outcome.result.status).toBe("IN_QUEUE");
  });
});

describe("the API key in JobRun errors", () => {
  it("is redacted from a failure that quotes it", async () => {
    const endpoint = {
      id: "e",
      run: async () => {
        throw new Error("proxy said: bad token key-SECRET-123");
      },
    } as unknown as Endpoint;
    const ctx: LifecycleContext = { endpoint: () => endpoint, log: () => {}, secrets: ["key-SECRET-123"] };
    const error = (await createJobRun(ctx, { endpointId: "e", input: {} }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("bad token");
    expect(error.message).not.toContain("key-SECRET-123");
  });

  it("is taken from the resolved settings", () => {
    expect(contextFromSettings({ apiKey: "key-from-config" }).secrets).toEqual(["key-from-config"]);
  });
});

describe("a failed read of the workers says what to do about that failure", () => {
  const fail = (status: number) => async () => {
    throw APIError.from({
      status,
      body: { message: "nope" },
      method: "GET",
      path: "/v2/serverless/e/workers",
    });
  };
  const run = (workers: () => Promise<never>) =>
    executeJobRun(resolveJobRunArgs({ endpointId: "e", input: {}, rollout: "wait", timeoutMs: 5_000 }), {
      endpoint: {} as Endpoint,
      log: () => {},
      workers,
    }).then(
      (outcome) => outcome.failure ?? "",
      (error: Error) => error.message,
    );

  it("a 429 is a quota, not a setting: no word about restUrl or the API key", async () => {
    const message = await run(fail(429));
    expect(message).toContain("No job was created");
    expect(message).toContain("rate-limited the reads of the endpoint's workers (429)");
    expect(message).not.toContain("restUrl");
    expect(message).not.toContain("API key");
  });

  it("a 401 points at the API key, a refused connection at runpod:restUrl", async () => {
    expect(await run(fail(401))).toContain("Check the API key (runpod:apiKey or RUNPOD_API_KEY)");
    const refused = async () => {
      throw new APIConnectionError("connect ECONNREFUSED", { notSent: true });
    };
    expect(await run(refused as () => Promise<never>)).toContain("Check runpod:restUrl (a REST v2 URL)");
  });
});
