/**
 * A pod create the service acted on but answered 429 or 503 (the answers that say "did nothing"):
 * `placePod` never POSTs again blind. Each test runs a small pods service on a scripted HTTP
 * server (127.0.0.1, port 0) whose POSTs meet the fates a test lists in turn (a pod made or not,
 * and the answer), then asserts every request the create sent, in order, and the pods that exist.
 * The client is the real one with its default retries (5); no test sleeps: the client's and the
 * placement's waits are recorded instead.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RunpodClient } from "../../src/client";
import type { PodInputs } from "../../src/provider/pod/args";
import { placePod } from "../../src/provider/pod/placement";
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const A = "NVIDIA H200";
const B = "NVIDIA A100 80GB PCIe";
const C = "NVIDIA L40S";

/** What one POST does: whether it makes the pod, and what it answers. */
type Fate = "created" | "503-acted" | "503" | "429-acted" | "429" | "400";

interface PodService {
  server: ScriptedServer;
  pods: Record<string, unknown>[];
  /** `GET /v2/pods`, `POST /v2/pods <gpu id>`, ... in the order received. */
  calls(): string[];
}

/**
 * A pods service: `GET /v2/pods` answers the pods made so far (500 once `listFails()` says so),
 * `POST /v2/pods` meets the next of `fates` (then "created"). Anything else is a 404.
 */
async function podService(
  fates: Fate[],
  listFails: (listsSoFar: number) => boolean = () => false,
  lagLists = 0,
): Promise<PodService> {
  const pods: Record<string, unknown>[] = [];
  /** Lists each pod is still left out of (a list that lags behind the create by `lagLists` lists). */
  const unseen = new Map<unknown, number>();
  let lists = 0;
  const server = await startScriptedServer({
    fallback: (req: RecordedRequest) => {
      if (req.method === "GET" && req.pathname === "/v2/pods") {
        lists++;
        if (listFails(lists)) return { status: 500, body: { title: "Internal Server Error", status: 500 } };
        const shown = pods.filter((p) => (unseen.get(p.id) ?? 0) === 0);
        for (const [id, left] of unseen) if (left > 0) unseen.set(id, left - 1);
        return { body: { pods: shown } };
      }
      if (req.method === "POST" && req.pathname === "/v2/pods") {
        const fate = fates.shift() ?? "created";
        const sent = JSON.parse(req.body) as Record<string, unknown>;
        const pod = { ...sent, id: `pod${pods.length + 1}`, status: "PROVISIONING" };
        if (fate === "created" || fate.endsWith("-acted")) {
          pods.push(pod);
          unseen.set(pod.id, lagLists);
        }
        if (fate === "created") return { status: 201, body: pod };
        if (fate === "400")
          return { status: 400, body: { title: "Bad Request", status: 400, detail: "no capacity" } };
        const status = fate.startsWith("429") ? 429 : 503;
        return {
          status,
          body: { title: status === 429 ? "Too Many Requests" : "Service Unavailable", status },
        };
      }
      return { status: 404, body: { title: "Not Found", status: 404 } };
    },
  });
  const calls = () =>
    server.requests.map((r) =>
      r.method === "POST"
        ? `POST ${r.pathname} ${(JSON.parse(r.body).gpu as { id: string }).id}`
        : `${r.method} ${r.pathname}`,
    );
  return { server, pods, calls };
}

const inputs = (fallbackGpuIds: string[]): PodInputs => ({
  name: "dev",
  image: "acme/dev:1",
  gpu: { id: A },
  fallbackGpuIds,
  env: { HF_TOKEN: "hf_NotActed-Secret-7e1c" },
});

const LIST = "GET /v2/pods";
const post = (gpu: string) => `POST /v2/pods ${gpu}`;

describe("a pod create answered 429 or 503", () => {
  let service: PodService;
  let stderr: string[];
  /** Every wait, the client's and the placement's, in ms. */
  let waits: number[];
  let client: RunpodClient;

  const start = async (fates: Fate[], listFails?: (lists: number) => boolean, lagLists = 0) => {
    service = await podService(fates, listFails, lagLists);
    client = new RunpodClient({
      apiKey: "not-acted-key-2f9a",
      restUrl: `${service.server.url}/v2`,
      rateLimits: false,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
  };
  const place = (fallbacks: string[]) =>
    placePod(client, inputs(fallbacks), ["hf_NotActed-Secret-7e1c"], {
      sleep: async (ms) => {
        waits.push(ms);
      },
    });

  beforeEach(() => {
    stderr = [];
    waits = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await service?.server.close();
  });

  it("records the pod a 503 made after one POST and one list, and sends no second POST", async () => {
    await start(["503-acted"]);
    const pod = await place([B]);
    expect(service.calls()).toEqual([LIST, post(A), LIST]);
    expect(service.pods.map((p) => p.id)).toEqual(["pod1"]);
    expect(pod.id).toBe("pod1");
    expect(waits).toEqual([1000]);
    expect(stderr.join("")).toBe(
      'warning: Creating pod "dev" was answered 503, but the service had created it anyway (id pod1, the one ' +
        'new pod named "dev" holding what was sent), so it was recorded and not created again.\n',
    );
  });

  it("records the pod a 503 made when the list lags behind the create, and sends no second POST", async () => {
    // The first list after the 503 does not show the pod yet; the second does.
    await start(["503-acted"], undefined, 1);
    const pod = await place([]);
    expect(service.calls()).toEqual([LIST, post(A), LIST, LIST]);
    expect(service.pods.map((p) => p.id)).toEqual(["pod1"]);
    expect(pod.id).toBe("pod1");
    expect(waits).toEqual([1000, 500]);
    expect(stderr.join("")).toMatch(
      /^warning: Creating pod "dev" was answered 503, but the service had created it anyway \(id pod1,/,
    );
  });

  it("records the pod the last candidate's last 503 made when the list lags, never saying none was made", async () => {
    await start(["503", "503", "503-acted"], undefined, 2);
    const pod = await place([]);
    const settled = [LIST, LIST, LIST];
    expect(service.calls()).toEqual([LIST, post(A), ...settled, post(A), ...settled, post(A), ...settled]);
    expect(service.pods.map((p) => p.id)).toEqual(["pod1"]);
    expect(pod.id).toBe("pod1");
  });

  it("records the pod a 429 made the same way, waiting as its Retry-After asks", async () => {
    await start(["429-acted"]);
    service.server.fallback = ((inner) => async (req: RecordedRequest) => {
      const reply = await inner(req);
      return reply.status === 429 ? { ...reply, headers: { "retry-after": "7" } } : reply;
    })(service.server.fallback as (req: RecordedRequest) => Promise<{ status?: number }>);
    const pod = await place([B]);
    expect(service.calls()).toEqual([LIST, post(A), LIST]);
    expect(service.pods.map((p) => p.id)).toEqual(["pod1"]);
    expect(pod.id).toBe("pod1");
    expect(waits).toEqual([7000]);
    expect(stderr.join("")).toMatch(
      /^warning: Creating pod "dev" was answered 429, but the service had created it anyway \(id pod1,/,
    );
  });

  it("lists before each resend of a candidate and records the pod its third 503 made, never POSTing a fallback", async () => {
    await start(["503", "503", "503-acted"]);
    const pod = await place([B, C]);
    // A list that shows nothing is looked at twice more (0.5 s, 1 s later) before a resend: it may lag.
    const none = [LIST, LIST, LIST];
    expect(service.calls()).toEqual([LIST, post(A), ...none, post(A), ...none, post(A), LIST]);
    expect(service.pods.map((p) => [p.id, (p.gpu as { id: string }).id])).toEqual([["pod1", A]]);
    expect(pod.id).toBe("pod1");
    expect(waits).toEqual([1000, 500, 1000, 2000, 500, 1000, 4000]);
  });

  it("records a pod an earlier candidate's 503 made when a later one is refused, and POSTs no third candidate", async () => {
    await start(["400", "429-acted"]);
    const pod = await place([B, C]);
    expect(service.calls()).toEqual([LIST, post(A), post(B), LIST]);
    expect(service.pods.map((p) => [p.id, (p.gpu as { id: string }).id])).toEqual([["pod1", B]]);
    expect(pod.id).toBe("pod1");
  });

  it("checks the last candidate's last 503 by a list before saying no pod was created, and records the pod it made", async () => {
    await start(["503", "503", "503-acted"]);
    const pod = await place([]);
    const none = [LIST, LIST, LIST];
    expect(service.calls()).toEqual([LIST, post(A), ...none, post(A), ...none, post(A), LIST]);
    expect(service.pods.map((p) => p.id)).toEqual(["pod1"]);
    expect(pod.id).toBe("pod1");
  });

  it("says no pod was created only after a list shows none, three POSTs per candidate at most", async () => {
    await start(["503", "503", "503", "400"]);
    const error = await place([B]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    const none = [LIST, LIST, LIST];
    expect(service.calls()).toEqual([
      LIST,
      post(A),
      ...none,
      post(A),
      ...none,
      post(A),
      ...none,
      post(B),
      "GET /v2/catalog/gpus",
    ]);
    expect(service.pods).toEqual([]);
    expect(waits).toEqual([1000, 500, 1000, 2000, 500, 1000, 4000, 500, 1000]);
    expect(error?.message).toBe(
      'No GPU type could be placed for pod "dev"; no pod was created (the pod lists after the last 429 or 503 ' +
        "answer show none). Tried in order: NVIDIA H200: 503 after 3 tries; NVIDIA A100 80GB PCIe: 400 Bad " +
        "Request; no capacity. The catalog could not be read for current stock (GET /v2/catalog/gpus failed " +
        "with 404: Not Found). Add a GPU type with stock to fallbackGpuIds (or change gpu.id), or try again later.",
    );
  });

  it("never POSTs again when the list after a 503 fails, and says a pod may exist and where to look", async () => {
    await start(["503-acted"], (lists) => lists > 1);
    const error = await place([B]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    // One list before the POST, the POST, then the list and the client's five retries of it.
    expect(service.calls()).toEqual([LIST, post(A), LIST, LIST, LIST, LIST, LIST, LIST]);
    expect(service.pods.map((p) => p.id)).toEqual(["pod1"]);
    expect(error?.message).toMatch(
      /^Creating pod "dev" was answered 503, and the service may have created it anyway \(it has been seen to act on a create it answered 429 or 503 to\); listing to check before sending it again failed \(.*500.*\)\. It was not sent again and nothing was recorded\. Before running pulumi up again, look in the RunPod console for a pod named "dev" made just now: if it is there, delete it, or the next up creates a second one\.$/,
    );
    expect(error?.message).not.toMatch(/no pod was created/i);
  });
});
