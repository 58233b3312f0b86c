/**
 * Text the service sends never acts on the terminal nor forges a line of `pulumi up`: an ESC
 * (ANSI colours, screen clears), a BEL, a CR or a LF inside a value the service gave (a
 * release's origin, an error body, a pod's status or SSH host) reaches every message escaped
 * (`\u001b`), through Pulumi's real dynamic-provider host from the packed package where the text
 * reaches the user through the host, and through the helpers that make it so.
 *
 * Failed before this test was added: the release's origin, the error body and the pod's status
 * reached the messages raw (a `\r\nerror: ...` printed as a line of its own).
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { describeBody } from "../../src/client";
import { redactError, withReasons } from "../../src/provider/common/engineText";
import { labelOf } from "../../src/provider/common/host";
import { boundEntry } from "../../src/provider/common/wording";
import { waitForPod } from "../../src/provider/pod/wait";
import { FakeClock } from "../support/fakeClock";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { serializedProvider } from "../support/serializedProvider.mts";
import { ENDPOINT_OUTPUTS, ENDPOINT_PROGRAM } from "./endpointFixtures";

const projectDir = inject("installedProjectDir");
const API_KEY = "rpa_service_text_key_71c0";
/** What a hostile or broken service puts in a value: colour, a CR/LF and a forged line, a bell. */
const FORGED = "MANUAL\u001b[31m\r\nerror: forged line\u0007";
/** {@link FORGED} as a message must show it: every control character escaped, on one line. */
const FORGED_SHOWN = "MANUAL\\u001b[31m\\u000d\\u000aerror: forged line\\u0007";

/** True when `text` holds a control character other than a line feed or a tab. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const actsOnTerminal = (text: string) => /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text);

describe("the service's text made printable (helpers)", () => {
  it("boundEntry shows one value as one line, its control characters escaped", () => {
    expect(boundEntry(FORGED)).toBe(FORGED_SHOWN);
  });

  it("describeBody escapes the control characters of an error body, so the client's messages have none", () => {
    expect(describeBody({ message: FORGED })).toBe(FORGED_SHOWN);
    expect(describeBody(FORGED)).toBe(FORGED_SHOWN);
  });

  it("labelOf escapes a name or an id the service gave", () => {
    expect(labelOf("a\nb", "id\u001b")).toBe('"a\\u000ab" (id id\\u001b)');
  });

  it("redactError keeps a message's own lines and escapes every other control character, reasons too", () => {
    const error = Object.assign(new Error("first line\u001b[2J\r\nsecond\u0007"), { id: "p1" });
    const safe = withReasons(redactError(error, []));
    expect(safe.message).toBe("first line\\u001b[2J\\u000d\nsecond\\u0007");
    expect(safe.reasons).toEqual([safe.message]);
    const given = withReasons(Object.assign(new Error("m"), { id: "p1", reasons: ["a\u001bb"] }));
    expect(given.reasons).toEqual(["a\\u001bb"]);
  });

  it("a pod's status from the service reaches the wait's history and reason escaped", async () => {
    const clock = new FakeClock();
    // Not a status the wait knows, so it waits to its bound and says what the pod was left in.
    const status = "ERROR\r\nerror: forged\u001b[0m";
    let reads = 0;
    const client = {
      pods: {
        get: async () => {
          reads += 1;
          return { id: "p1", name: "dev", status };
        },
      },
    };
    const ended = await clock.runUntil(
      waitForPod({
        client: client as never,
        pod: { id: "p1", name: "dev", status: "STARTING" } as never,
        wanted: "RUNNING",
        waitFor: "running",
        timeoutMs: 2500,
        clock,
      }),
    );
    if (!ended.ok) throw ended.error;
    const shown = "ERROR\\u000d\\u000aerror: forged\\u001b[0m";
    expect(ended.value).toMatchObject({
      kind: "failure",
      history: ["STARTING", shown],
      why: `it was not RUNNING within waitTimeoutMs (2500 ms); its status is ${shown}`,
    });
    expect(reads).toBe(3);
  });
});

describe("the service's text made printable, through the provider host", () => {
  let server: ScriptedServer;
  let host: ProviderHost;

  beforeAll(async () => {
    server = await startScriptedServer();
    host = await startProviderHost({ projectDir });
    await host.configure({
      "runpod:apiKey": API_KEY,
      "runpod:restUrl": `${server.url}/v2`,
      "runpod:serverlessUrl": server.url,
    });
  }, 60_000);
  afterEach(() => {
    server.fallback = undefined;
  });
  afterAll(async () => {
    await host?.close();
    await server?.close();
  });

  it("a guarded endpoint's diff names the release's origin escaped, the message one line", async () => {
    const id = "ep-guarded";
    const smokeTest = { input: { ping: 1 } };
    server.enqueue({
      body: {
        endpointVersion: 2,
        rollout: { inProgress: false, workersOnLatest: 1, workersTotal: 1, percentOnLatest: 100 },
        releases: [
          {
            id: "rel-2",
            version: 2,
            source: FORGED,
            createdByUserId: "user\u0007-ci",
            createdAt: "2026-11-25T10:00:00.000Z",
            workerCount: 1,
            diff: [],
          },
        ],
      },
    });
    const olds = {
      ...ENDPOINT_OUTPUTS,
      latestReleaseId: "rel-1",
      smokeTest,
      lastSmokeTest: { version: 1, passed: true, jobIds: ["j1"], timeline: [] },
      __provider: await serializedProvider(projectDir, "ServerlessEndpoint"),
    };
    const error = await host
      .diff(id, urnFor("ServerlessEndpoint", "api"), olds, { ...ENDPOINT_PROGRAM, smokeTest })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(HostError);
    const message = (error as HostError).message;
    expect(message).toBe(
      `ServerlessEndpoint "api" (id ${id}) serves version 2, which this stack's state does not know (version 1): ` +
        "a deploy was cut short before its smoke test ended, or someone else deployed " +
        `(release rel-2, created by user user\\u0007-ci, at 2026-11-25T10:00:00.000Z, source ${FORGED_SHOWN}). ` +
        "Run `pulumi up --refresh` to read it and smoke-test it (or `pulumi refresh`, then `pulumi up`).",
    );
    expect(actsOnTerminal(host.stderr())).toBe(false);
    expect(host.stderr()).not.toContain("\nerror: forged line");
  });

  it("a pod's refresh that the service refuses shows the refusal's body escaped, the message one line", async () => {
    server.fallback = () => ({ status: 403, body: { message: FORGED } });
    const error = await host
      .read("p1", urnFor("Pod", "dev"), {
        name: "dev",
        __provider: await serializedProvider(projectDir, "Pod"),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(HostError);
    const message = (error as HostError).message;
    expect(message).toBe(`GET /v2/pods/p1 failed with 403: ${FORGED_SHOWN}`);
    expect(actsOnTerminal(message)).toBe(false);
    expect(actsOnTerminal(host.stderr())).toBe(false);
    expect(host.stderr()).not.toContain("\nerror: forged line");
  });
});
