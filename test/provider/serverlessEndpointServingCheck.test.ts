/**
 * ServerlessEndpoint's `diff` for a guarded endpoint reads which release serves, once, against a
 * scripted server on 127.0.0.1: a release newer than the state knows (a host killed mid-gate, or a
 * deploy made elsewhere) fails the diff saying to refresh; the same version, a 404 or a failed read
 * leave the diff as it was; an endpoint with no smoke test is never read.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunpodSettings } from "../../src/provider/config";
import { operations } from "../../src/provider/serverlessEndpoint/operations";
import { SERVING_READ_TIMEOUT_MS } from "../../src/provider/serverlessEndpoint/servingCheck";
import { FakeClock } from "../support/fakeClock";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { ENDPOINT_OUTPUTS, ENDPOINT_PROGRAM } from "./endpointFixtures";

const API_KEY = "serving-check-key-5d1e0a";
const ID = "ep-guarded";
const SMOKE = { input: { ping: 1 } };

/** Outputs of a guarded endpoint whose last gate passed on version 1. */
const OLDS = {
  ...ENDPOINT_OUTPUTS,
  latestReleaseId: "rel-1",
  smokeTest: SMOKE,
  lastSmokeTest: { version: 1, passed: true, jobIds: ["j1"], timeline: [] },
};
/** The same program as the one the state was made from. */
const NEWS = { ...ENDPOINT_PROGRAM, smokeTest: SMOKE };

/** A `/releases` answer whose endpoint serves `version`. */
const releasesAt = (version: number) => ({
  status: 200,
  body: {
    endpointVersion: version,
    rollout: { inProgress: false, workersOnLatest: 2, workersTotal: 2, percentOnLatest: 100 },
    releases: [
      {
        id: `rel-${version}`,
        version,
        source: "MANUAL",
        createdByUserId: "user-ci",
        createdAt: "2026-11-25T10:00:00.000Z",
        workerCount: 2,
        diff: [{ field: "image", old: "acme/api:1", new: `acme/api:${version}` }],
      },
    ],
  },
});

describe("a guarded endpoint's diff reads the release it serves", () => {
  let server: ScriptedServer;
  let settings: RunpodSettings;
  let stderr: string[];

  beforeEach(async () => {
    server = await startScriptedServer();
    settings = { apiKey: API_KEY, restUrl: `${server.url}/v2`, serverlessUrl: server.url };
    stderr = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await server.close();
  });

  it("fails the diff when the endpoint serves a version the state does not know, naming it and what to do", async () => {
    server.enqueue(releasesAt(2));
    const error = await operations.diff(settings, ID, OLDS, NEWS).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toBe(
      `ServerlessEndpoint "api" (id ${ID}) serves version 2, which this stack's state does not know (version 1): ` +
        "a deploy was cut short before its smoke test ended, or someone else deployed " +
        "(release rel-2, created by user user-ci, at 2026-11-25T10:00:00.000Z, source MANUAL). " +
        "Run `pulumi up --refresh` to read it and smoke-test it (or `pulumi refresh`, then `pulumi up`).",
    );
    expect(server.requests.map((r) => `${r.method} ${r.pathname}`)).toEqual([
      `GET /v2/serverless/${ID}/releases`,
    ]);
    expect(error?.message).not.toContain(API_KEY);
    expect(error?.message).not.toContain("small");
  });

  it("knows the version of the last smoke test too: a state whose gate ran on a newer version than its outputs is not failed", async () => {
    server.enqueue(releasesAt(2));
    const olds = { ...OLDS, lastSmokeTest: { ...OLDS.lastSmokeTest, version: 2, passed: false } };
    await expect(operations.diff(settings, ID, olds, NEWS)).resolves.toMatchObject({ changes: false });
    expect(server.requests).toHaveLength(1);
  });

  it("plans nothing when the endpoint serves the version the state records", async () => {
    server.enqueue(releasesAt(1));
    await expect(operations.diff(settings, ID, OLDS, NEWS)).resolves.toEqual({ changes: false });
    expect(server.requests).toHaveLength(1);
    expect(stderr).toEqual([]);
  });

  it("makes no request for an endpoint without a smoke test, in the state or in the program", async () => {
    const { smokeTest: _s, lastSmokeTest: _l, ...unguarded } = OLDS;
    const { smokeTest: _n, ...program } = NEWS;
    await expect(operations.diff(settings, ID, unguarded, program)).resolves.toEqual({ changes: false });
    await expect(operations.diff(settings, ID, OLDS, program)).resolves.toMatchObject({ changes: true });
    await expect(operations.diff(settings, ID, unguarded, NEWS)).resolves.toMatchObject({ changes: true });
    expect(server.requests).toHaveLength(0);
  });

  it("goes on as before, with one line on stderr, when the service keeps failing until the read's bound", async () => {
    const clock = new FakeClock();
    server.fallback = () => ({ status: 503, body: { message: API_KEY } });
    const diff = operations.diff({ ...settings, clock }, ID, OLDS, NEWS);
    // The client retries on its own backoff; the bound ends the read wherever it is.
    await vi.waitFor(() => expect(server.requests.length).toBeGreaterThan(0));
    await clock.advance(SERVING_READ_TIMEOUT_MS);
    await expect(diff).resolves.toEqual({ changes: false });
    expect(server.requests.every((r) => r.pathname === `/v2/serverless/${ID}/releases`)).toBe(true);
    expect(stderr).toEqual([
      `warning: ServerlessEndpoint "api" (id ${ID}): could not check which release it serves ` +
        "(no usable answer within 10 s); the diff goes on from the state.\n",
    ]);
  });

  it("goes on as before, with one line on stderr naming the error, when the service refuses the read", async () => {
    server.enqueue({ status: 401, body: { message: `bad key ${API_KEY}` } });
    await expect(operations.diff(settings, ID, OLDS, NEWS)).resolves.toEqual({ changes: false });
    expect(server.requests).toHaveLength(1);
    expect(stderr).toEqual([
      `warning: ServerlessEndpoint "api" (id ${ID}): could not check which release it serves ` +
        "(authentication_error, HTTP 401); the diff goes on from the state.\n",
    ]);
  });

  it("goes on as before, silently, when the endpoint is gone (404): refresh handles that", async () => {
    server.enqueue({ status: 404, body: { message: "not found" } });
    await expect(operations.diff(settings, ID, OLDS, NEWS)).resolves.toEqual({ changes: false });
    expect(server.requests).toHaveLength(1);
    expect(stderr).toEqual([]);
  });
});
