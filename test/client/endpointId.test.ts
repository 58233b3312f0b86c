/**
 * One endpoint-id rule (`src/client/endpointId.ts`) at every entry point, before the network:
 * `client.endpoint(id)`, `getEndpointHealth` and JobRun's `check`. A server counts requests:
 * none may be sent for a bad id.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ENDPOINT_ID_RULE, isEndpointId, ValidationError } from "../../src/client";
import { getEndpointHealth } from "../../src/provider/endpointHealth";
import { checkJobRunArgs } from "../../src/provider/smokeTestJob/jobArgsCheck";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { clientFor } from "./helpers";

const BAD_IDS = ["a/b", "a b", "..", ".", "", " ", "a\tb", "/", "ep/../other", "ep\n"];
const GOOD_IDS = ["echo", "ep-1", "abc123xyz", "a.b", "x%2Fy"];

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer({
    fallback: () => ({
      body: {
        jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
        workers: { idle: 1, running: 0 },
      },
    }),
  });
});
afterEach(async () => {
  await server.close();
});

/** The error must be a ValidationError on `endpointId` that says what is allowed. */
function expectRuleError(error: unknown, id: string): void {
  expect(error, JSON.stringify(id)).toBeInstanceOf(ValidationError);
  expect((error as ValidationError).path).toEqual(["endpointId"]);
  expect((error as ValidationError).message).toContain(`endpointId must be ${ENDPOINT_ID_RULE}`);
}

describe("the endpoint-id rule", () => {
  it("accepts ids the service could have and refuses the rest", () => {
    for (const id of GOOD_IDS) expect([id, isEndpointId(id)]).toEqual([id, true]);
    for (const id of BAD_IDS) expect([id, isEndpointId(id)]).toEqual([id, false]);
    expect(isEndpointId(undefined)).toBe(false);
  });

  it("client.endpoint(id) refuses a bad id itself, before any call", () => {
    for (const id of BAD_IDS) {
      let error: unknown;
      try {
        clientFor(server).endpoint(id);
      } catch (e) {
        error = e;
      }
      expectRuleError(error, id);
    }
    expect(server.requests).toHaveLength(0);
  });

  it("getEndpointHealth refuses a bad id naming endpointId, and sends nothing", async () => {
    for (const id of BAD_IDS) {
      const error = await getEndpointHealth({ endpointId: id }, { client: clientFor(server) }).catch(
        (e: unknown) => e,
      );
      expectRuleError(error, id);
      expect((error as Error).message).toMatch(/^getEndpointHealth: /);
    }
    const missing = await getEndpointHealth({} as { endpointId: string }, {
      client: clientFor(server),
    }).catch((e: unknown) => e);
    expect((missing as ValidationError).path).toEqual(["endpointId"]);
    expect(server.requests).toHaveLength(0);
    // A good id goes through.
    await getEndpointHealth({ endpointId: "ep-1" }, { client: clientFor(server) });
    expect(server.requests.map((r) => r.pathname)).toEqual(["/v2/ep-1/health"]);
  });

  it("JobRun's check applies the same rule and wording", () => {
    for (const id of BAD_IDS) {
      const failures = checkJobRunArgs({ endpointId: id, input: {} });
      expect(failures, JSON.stringify(id)).toEqual([
        { property: "endpointId", reason: `endpointId must be ${ENDPOINT_ID_RULE}` },
      ]);
    }
    for (const id of GOOD_IDS) expect(checkJobRunArgs({ endpointId: id, input: {} })).toEqual([]);
  });
});
