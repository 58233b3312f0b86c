/**
 * JobRun `http` probes of load-balancer endpoints, in process with a scripted load balancer,
 * worker list and worker logs: the check failures, the verdict (status, expect, latency), the
 * release check after the answer, the failing worker's log tail, and no header value anywhere but
 * the `http` argument itself.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import type {
  Endpoint,
  LoadBalancerRequest,
  LoadBalancerResponse,
  ServerlessWorkerList,
  WorkerLogEvent,
} from "../../src/client";
import { RunpodClient, ValidationError } from "../../src/client";
import { checkJobRunArgs, createJobRun, type LifecycleContext } from "../../src/provider/jobRun/operations";

const TOKEN = "tok_PROBE_SECRET_8812";
const KEY = "rpa_KEY_SECRET_4242";

const answer = (status: number, body: unknown, latencyMs = 12): LoadBalancerResponse => ({
  status,
  headers: {},
  body,
  bodyBytes: 10,
  bodyTruncated: false,
  latencyMs,
  attempts: 1,
});

const workers = (endpointVersion: number, list: [string, string, number][]): ServerlessWorkerList => ({
  endpointVersion,
  workers: list.map(([id, status, version]) => ({
    id,
    status,
    version,
    isStale: version !== endpointVersion,
  })),
  summary: { running: 0, idle: list.length, initializing: 0, throttled: 0, unhealthy: 0, total: list.length },
});

interface Script {
  answers: (LoadBalancerResponse | Error)[];
  lists: ServerlessWorkerList[];
  logs?: Record<string, string[]>;
  type?: string;
}

function harness(script: Script) {
  const sent: LoadBalancerRequest[] = [];
  const lines: string[] = [];
  let reads = 0;
  const ctx: LifecycleContext = {
    endpoint: () => ({ id: "lb1" }) as unknown as Endpoint,
    log: (line) => lines.push(line),
    secrets: [KEY],
    workers: async () => {
      const list = script.lists[Math.min(reads, script.lists.length - 1)] as ServerlessWorkerList;
      reads += 1;
      return list;
    },
    workerLogs: (_endpointId, workerId) =>
      (async function* (): AsyncGenerator<WorkerLogEvent> {
        for (const line of script.logs?.[workerId] ?? []) {
          yield { source: "container", line, ts: "2026-11-25T02:00:00.000Z" };
        }
      })(),
    loadBalancer: (id) => ({
      id,
      baseUrl: async () => {
        if (script.type === "QUEUE") {
          throw new ValidationError(
            `endpoint ${id} is type QUEUE, not LOAD_BALANCER: it has no HTTP paths of its own (requestUrls.base); send queue jobs with client.endpoint(id).run instead`,
            ["type"],
          );
        }
        return "http://lb.example/lb/lb1";
      },
      request: async (req) => {
        sent.push(req);
        const next = script.answers.shift();
        if (next === undefined) throw new Error("no answer scripted");
        if (next instanceof Error) throw next;
        return next;
      },
    }),
  };
  return { ctx, sent, lines, reads: () => reads };
}

const chat = {
  endpointId: "lb1",
  http: {
    path: "/v1/chat/completions",
    body: { messages: [{ role: "user", content: "hi" }] },
    headers: { "X-Api-Token": TOKEN },
  },
};

/** Everything a failed run leaves for the engine: message, reasons and recorded outputs. */
function leaked(error: unknown): string {
  const e = error as { message: string; reasons?: string[]; properties?: Record<string, unknown> };
  const { http: _http, ...props } = e.properties ?? {};
  return `${e.message}\n${JSON.stringify(e.reasons)}\n${JSON.stringify(props)}`;
}

describe("JobRun http: check", () => {
  const failures = (news: Record<string, unknown>) => checkJobRunArgs(news);

  it("accepts a probe without input, and still requires input without http", () => {
    expect(failures({ endpointId: "lb1", http: { path: "/ping" } })).toEqual([]);
    expect(failures({ endpointId: "lb1" })).toEqual([
      {
        property: "",
        reason:
          "input is required: the job input, a JSON object (or give http instead to probe a LOAD_BALANCER endpoint)",
      },
    ]);
  });

  it("refuses input with http, naming both, and every job-only argument", () => {
    expect(
      failures({
        endpointId: "lb1",
        input: {},
        http: { path: "/x" },
        webhook: "https://hook.example/x",
        policy: { ttl: 10_000 },
        mode: "runsync",
        collectStream: true,
        retries: 2,
        expect: { status: "FAILED", maxDelayMs: 5 },
      }),
    ).toEqual([
      {
        property: "input",
        reason:
          "input and http are mutually exclusive: input runs a queue job, http probes a load-balancer endpoint; give one",
      },
      {
        property: "webhook",
        reason: "webhook does not apply to an http probe: a load balancer calls no webhook; leave it out",
      },
      {
        property: "policy",
        reason: "policy does not apply to an http probe: the execution policy is a queue job's; leave it out",
      },
      {
        property: "mode",
        reason:
          'mode does not apply to an http probe: mode "runsync" is a way to submit a queue job; leave it out',
      },
      {
        property: "collectStream",
        reason: "collectStream does not apply to an http probe: a probe has no job stream; leave it out",
      },
      {
        property: "retries",
        reason:
          "retries does not apply to an http probe: it re-queues a FAILED job with the service's /retry, and a probe is sent once (once more only when another release answered); leave it out",
      },
      {
        property: "",
        reason:
          "expect.status (FAILED) does not apply to an http probe: set http.expectStatus, the HTTP status the answer must have",
      },
      {
        property: "",
        reason:
          "expect.maxDelayMs does not apply to an http probe (a load balancer reports no queue time): expect.maxExecutionMs bounds the request's latency",
      },
    ]);
  });

  it("refuses s3Config on a probe", () => {
    const result = failures({
      endpointId: "lb1",
      http: { path: "/x" },
      s3Config: { accessId: "a", accessSecret: "s", bucketName: "b", endpointUrl: "https://s3.example" },
    });
    expect(result).toEqual([
      {
        property: "",
        reason:
          "s3Config does not apply to an http probe: storage settings are passed to queue jobs only; leave it out",
      },
    ]);
  });

  it("names each bad http field and what is allowed, never a header value", () => {
    const result = failures({
      endpointId: "lb1",
      http: {
        path: "v1/models",
        method: "TRACE",
        headers: { Authorization: `Bearer ${TOKEN}`, "X-N": 3 },
        expectStatus: 700,
      },
    });
    expect(result).toEqual([
      { property: "", reason: "http.method must be one of GET, POST, PUT, PATCH, DELETE" },
      { property: "", reason: 'http.path must be a string starting with "/", got "v1/models"' },
      { property: "", reason: "http.headers.X-N: header values must be strings" },
      { property: "", reason: "http.expectStatus must be at most 599" },
    ]);
    const auth = failures({
      endpointId: "lb1",
      http: { path: "/x", headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    expect(auth).toEqual([
      {
        property: "",
        reason:
          "http.headers.Authorization may not be set (the client sends Authorization: Bearer with its API key)",
      },
    ]);
    expect(JSON.stringify([result, auth])).not.toContain(TOKEN);
    expect(failures({ endpointId: "lb1", http: { path: "/x", extra: 1 } })).toEqual([
      { property: "", reason: "unknown field http.extra: not allowed here" },
    ]);
    expect(failures({ endpointId: "lb1", http: { path: "/a/../b" } })).toEqual([
      { property: "", reason: 'http.path must not contain "." or ".." segments' },
    ]);
  });

  it.each([
    ["/v1/models", "http must be an object with path and optional method, body, headers and expectStatus"],
    [{ body: {} }, 'http.path is required: the path on the endpoint, starting with "/"'],
    [{ path: "/a b" }, "http.path must not contain spaces, control characters or '#', nor start with '//'"],
    [{ path: "/x", headers: ["X-A"] }, "http.headers must be an object of header names to string values"],
    [
      { path: "/x", headers: { "bad name": "v" } },
      'http.headers.bad name: "bad name" is not a valid header name',
    ],
    [{ path: "/x", expectStatus: 200.5 }, "http.expectStatus must be an integer HTTP status"],
  ])("fails http %j with the reason naming the field", (http, reason) => {
    expect(failures({ endpointId: "lb1", http })).toEqual([{ property: expect.any(String), reason }]);
  });

  it("fails a probe on a REST v1 restUrl, which has no requestUrls to read", () => {
    expect(
      checkJobRunArgs(
        { endpointId: "lb1", http: { path: "/ping" } },
        { restUrl: "https://rest.runpod.io/v1" },
      ),
    ).toEqual([
      {
        property: "",
        reason:
          "an http probe reads the endpoint's requestUrls.base over REST v2, and runpod:restUrl (or RUNPOD_REST_API_URL) is REST v1: set it to a /v2 URL (https://api.runpod.io/v2, the default)",
      },
    ]);
  });

  it("does not judge an http still unknown (preview), nor input's absence then", () => {
    const unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    expect(failures({ endpointId: "lb1", http: unknown })).toEqual([]);
    expect(failures({ endpointId: "lb1", http: { path: unknown, headers: { "X-A": unknown } } })).toEqual([]);
  });
});

describe("JobRun http: the probe", () => {
  it("passes on the expected status and output, recording status, answer, latency and release", async () => {
    const answerBody = { choices: [{ message: { role: "assistant", content: "echo: hi" } }] };
    const h = harness({ answers: [answer(200, answerBody, 42)], lists: [workers(3, [["w1", "IDLE", 3]])] });
    const { outs } = await createJobRun(h.ctx, {
      ...chat,
      expect: { output: { choices: [{ message: { content: "echo: hi" } }] }, maxExecutionMs: 1000 },
    });
    expect(outs).toMatchObject({
      passed: true,
      httpStatus: 200,
      latencyMs: 42,
      output: answerBody,
      endpointVersion: 3,
      attempts: 1,
      http: chat.http,
    });
    expect(outs.timeline?.map((t) => t.status)).toEqual(["REQUEST_SENT", "HTTP_200"]);
    expect(outs.jobId).toBeUndefined();
    expect(h.sent).toEqual([
      {
        method: undefined,
        path: "/v1/chat/completions",
        body: chat.http.body,
        headers: { "X-Api-Token": TOKEN },
      },
    ]);
    // One read before sending (the rollout wait), one after the answer (the release check).
    expect(h.reads()).toBe(2);
  });

  it("fails on another status with the body excerpt and the log of the worker that logged the request", async () => {
    const h = harness({
      answers: [answer(500, { error: `model crashed (token ${TOKEN})` })],
      lists: [
        workers(2, [
          ["w1", "IDLE", 2],
          ["w2", "RUNNING", 2],
        ]),
      ],
      logs: {
        w1: ["GET /ping 200"],
        w2: ["loading model", `POST /v1/chat/completions 500 model crashed ${KEY}`],
      },
    });
    const error = await createJobRun(h.ctx, chat).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message.split("\n").slice(0, 4)).toEqual([
      "JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: the endpoint answered HTTP 500, expected 200",
      "Answer: HTTP 500 in 12 ms; attempts: 1",
      'Answer body: {"error":"model crashed (token [redacted])"}',
      "Release: endpoint version 2 (every ready worker runs it)",
    ]);
    expect(message).toMatch(/\nTimeline: REQUEST_SENT 0\.\d\d s -> HTTP_500 0\.\d\d s\n/);
    expect(message.split("\n").slice(5)).toEqual([
      "Hint: The worker's server failed: read the answer body and the worker log below, fix the image or its env. `pulumi up` sends the probe again, even with unchanged arguments.",
      "The load balancer does not say which worker answered; of 2 ready workers, this one logged the request.",
      "Worker log (last 2 lines of w2):",
      "  2026-11-25T02:00:00.000Z container loading model",
      "  2026-11-25T02:00:00.000Z container POST /v1/chat/completions 500 model crashed [redacted]",
    ]);
    const props = (error as { properties: Record<string, unknown> }).properties;
    expect(props).toMatchObject({ passed: false, httpStatus: 500, endpointVersion: 2 });
    expect(props.workerLogTail).toEqual([
      "2026-11-25T02:00:00.000Z container loading model",
      "2026-11-25T02:00:00.000Z container POST /v1/chat/completions 500 model crashed [redacted]",
    ]);
    const text = `${leaked(error)}\n${h.lines.join("\n")}`;
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(KEY);
  });

  it("fails on an answer that does not contain expect.output, listing the difference", async () => {
    const h = harness({
      answers: [answer(200, { choices: [{ message: { content: "echo: bye" } }] })],
      lists: [workers(1, [["w1", "IDLE", 1]])],
      logs: { w1: ["POST /v1/chat/completions 200"] },
    });
    const error = await createJobRun(h.ctx, {
      ...chat,
      expect: { output: { choices: [{ message: { content: "echo: hi" } }] } },
    }).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message.split("\n")[0]).toBe(
      "JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: the endpoint answered HTTP 200 but its answer does not contain expect.output (1 difference):",
    );
    expect(message).toContain('choices[0].message.content: expected "echo: hi", got "echo: bye"');
    expect(message).toContain(
      "Hint: Fix the worker or the request if the answer is wrong, or update expect.output if the new answer is right; `pulumi up` then runs the probe again.",
    );
    expect(message).toContain(
      "The load balancer does not say which worker answered; the release has one ready worker.",
    );
    expect(message).toContain("Worker log (last 1 lines of w1):");
  });

  it("fails on an answer over expect.maxExecutionMs, naming the measured latency", async () => {
    const h = harness({
      answers: [answer(200, { ok: true }, 900)],
      lists: [workers(1, [["w1", "IDLE", 1]])],
    });
    const error = await createJobRun(h.ctx, { ...chat, expect: { maxExecutionMs: 500 } }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message.split("\n")[0]).toBe(
      "JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: the endpoint answered HTTP 200 but missed its latency budget: expect.maxExecutionMs is 500 ms but the request took 900 ms",
    );
  });

  it("fails a 2xx answer with an error field unless allowErrorOutput", async () => {
    const script = () => ({
      answers: [answer(200, { error: "no model" })],
      lists: [workers(1, [["w1", "IDLE", 1]])],
    });
    const error = await createJobRun(harness(script()).ctx, chat).catch((e: unknown) => e);
    expect((error as Error).message.split("\n")[0]).toBe(
      'JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: the endpoint answered HTTP 200 but its answer has an error field: "no model"',
    );
    const { outs } = await createJobRun(harness(script()).ctx, {
      ...chat,
      expect: { allowErrorOutput: true },
    });
    expect(outs.passed).toBe(true);
  });

  it("sends once more when an older release may have answered, and passes on the current one", async () => {
    const h = harness({
      answers: [answer(200, { v: 1 }), answer(200, { v: 2 })],
      lists: [
        workers(1, [["w1", "IDLE", 1]]),
        // After the first answer: version 2 is rolling out, w1 still runs version 1.
        workers(2, [
          ["w1", "IDLE", 1],
          ["w2", "IDLE", 2],
        ]),
        workers(2, [["w2", "IDLE", 2]]),
      ],
    });
    const { outs } = await createJobRun(h.ctx, { ...chat, expect: { output: { v: 2 } } });
    expect(outs).toMatchObject({ passed: true, attempts: 2, endpointVersion: 2, output: { v: 2 } });
    expect(outs.timeline?.map((t) => t.status)).toEqual([
      "REQUEST_SENT",
      "HTTP_200",
      "STALE_WORKER",
      "REQUEST_SENT",
      "HTTP_200",
    ]);
    expect(h.sent).toHaveLength(2);
  });

  it("fails clearly when neither of two answers can be told to come from the current release", async () => {
    const h = harness({
      answers: [answer(200, {}), answer(200, {})],
      lists: [
        workers(1, [["w1", "IDLE", 1]]),
        workers(2, [["w1", "IDLE", 2]]),
        workers(2, [["w1", "IDLE", 2]]),
        workers(3, [["w1", "IDLE", 3]]),
      ],
    });
    const error = await createJobRun(h.ctx, chat).catch((e: unknown) => e);
    expect((error as Error).message.split("\n")[0]).toBe(
      "JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: the probe was sent twice and neither answer can be told to come from the endpoint's current release (the endpoint moved from version 2 to 3 while the request was answered): the endpoint was redeployed during the probe",
    );
  });

  it("fails before sending anything on a QUEUE endpoint, saying to use input", async () => {
    const h = harness({ answers: [], lists: [workers(1, [])], type: "QUEUE" });
    const error = await createJobRun(h.ctx, chat).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      "JobRun cannot probe endpoint lb1 over HTTP: endpoint lb1 is type QUEUE, not LOAD_BALANCER: it has no HTTP paths of its own (requestUrls.base); send queue jobs with client.endpoint(id).run instead. Nothing was sent. Hint: http probes LOAD_BALANCER endpoints; for a QUEUE endpoint give input (a queue job) instead of http.",
    );
    expect((error as { id?: string }).id).toBeUndefined();
    expect(h.sent).toHaveLength(0);
  });

  it("fails before sending anything when requestUrls.base is not on the service's hosts, without the key", async () => {
    // A real client: the REST lookup (on loopback) names a base on another host than serverlessUrl's.
    const lookup = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          id: "lb1",
          name: "lb",
          type: "LOAD_BALANCER",
          requestUrls: { base: "https://lb1.attacker.invalid" },
        }),
      );
    });
    await new Promise<void>((resolve) => lookup.listen(0, "127.0.0.1", resolve));
    try {
      const client = new RunpodClient({
        apiKey: KEY,
        restUrl: `http://127.0.0.1:${(lookup.address() as AddressInfo).port}/v2`,
        serverlessUrl: "https://api.runpod.ai",
        rateLimits: false,
        env: {},
      });
      const h = harness({ answers: [], lists: [workers(1, [])] });
      const ctx = { ...h.ctx, loadBalancer: (id: string) => client.loadBalancer(id) };
      const error = await createJobRun(ctx, chat).catch((e: unknown) => e);
      expect((error as Error).message).toMatch(
        /^JobRun cannot probe endpoint lb1 over HTTP: endpoint lb1's requestUrls\.base is on https:\/\/lb1\.attacker\.invalid, which is not one of the service's hosts \(api\.runpod\.ai, 127\.0\.0\.1/,
      );
      expect(leaked(error)).not.toContain(KEY);
      expect((error as { id?: string }).id).toBeUndefined();
    } finally {
      lookup.closeAllConnections();
      await new Promise<void>((resolve) => lookup.close(() => resolve()));
    }
  });

  it("gives up at timeoutMs when no answer comes, recording the run as failed", async () => {
    const h = harness({ answers: [], lists: [workers(1, [["w1", "IDLE", 1]])] });
    const ctx: LifecycleContext = {
      ...h.ctx,
      loadBalancer: (id) => ({
        id,
        baseUrl: async () => "http://lb.example/lb/lb1",
        // Never answers: rejects only when the probe's deadline aborts it.
        request: (_req, options) =>
          new Promise((_resolve, reject) => {
            options?.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
          }),
      }),
    };
    const error = await createJobRun(ctx, { ...chat, timeoutMs: 50 }).catch((e: unknown) => e);
    expect((error as Error).message.split("\n").slice(0, 2)).toEqual([
      "JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: no answer within timeoutMs (50 ms)",
      "Answer: none; attempts: 1",
    ]);
    const props = (error as { properties: Record<string, unknown> }).properties;
    expect(props).toMatchObject({ passed: false, error: "no answer within timeoutMs (50 ms)" });
    expect((props.timeline as { status: string }[]).map((t) => t.status)).toEqual([
      "REQUEST_SENT",
      "NO_ANSWER",
    ]);
  });

  it("records a probe that got no answer as failed, with the reason and no header value", async () => {
    const h = harness({
      answers: [new Error(`socket hang up while sending ${TOKEN}`)],
      lists: [workers(1, [["w1", "IDLE", 1]])],
    });
    const error = await createJobRun(h.ctx, chat).catch((e: unknown) => e);
    const message = (error as Error).message;
    expect(message.split("\n").slice(0, 3)).toEqual([
      "JobRun failed on endpoint lb1, HTTP probe POST /v1/chat/completions: the request got no answer (socket hang up while sending [redacted])",
      "Answer: none; attempts: 1",
      "Error: the request got no answer (socket hang up while sending [redacted])",
    ]);
    expect((error as { properties: Record<string, unknown> }).properties).toMatchObject({ passed: false });
    expect(leaked(error)).not.toContain(TOKEN);
  });
});
