/**
 * Network volume lookups in a program under `@pulumi/pulumi/testing` mocks, against a scripted
 * 127.0.0.1 server that answers the list call in both REST dialects (v1: bare array with
 * `dataCenterId`; v2: `{ networkVolumes }` with `dataCenter`). Same assertions for both.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { NetworkVolume } from "../../src/client/schemas";
import {
  getNetworkVolume,
  getNetworkVolumeOutput,
  getNetworkVolumes,
  getNetworkVolumesOutput,
} from "../../src/provider/networkVolume/lookups";

const API_KEY = "lookup-test-key-31f0";

const VOLUMES: NetworkVolume[] = [
  { id: "vol-a1", name: "models", size: 50, dataCenterId: "EU-RO-1" },
  { id: "vol-b2", name: "models", size: 100, dataCenterId: "US-KS-2" },
  { id: "vol-c3", name: "datasets", size: 20, dataCenterId: "EU-RO-1" },
  { id: "vol-d4", name: "scratch", size: 10, dataCenterId: "US-KS-2" },
];

/** A scripted management server: serves `volumes`, counts list calls, checks the key. */
class VolumeServer {
  volumes: NetworkVolume[] = VOLUMES;
  listCalls = 0;
  readonly server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${API_KEY}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"message":"bad key"}');
      return;
    }
    if (req.method === "GET" && req.url === "/v1/networkvolumes") {
      this.listCalls++;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(this.volumes));
    } else if (req.method === "GET" && req.url === "/v2/network-volumes") {
      this.listCalls++;
      const networkVolumes = this.volumes.map(({ dataCenterId, ...rest }) => ({
        ...rest,
        dataCenter: dataCenterId,
      }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ networkVolumes }));
    } else {
      res.writeHead(404, { "content-type": "application/json" }).end('{"message":"no such route"}');
    }
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A resource of some other provider that takes a volume id (registered with the mock monitor). */
class Consumer extends pulumi.CustomResource {
  constructor(name: string, args: { networkVolumeId: pulumi.Input<string> }) {
    super("test:index:Consumer", name, args);
  }
}

const registeredInputs = new Map<string, Record<string, unknown>>();
const server = new VolumeServer();
let origin = "";

beforeAll(async () => {
  origin = await server.start();
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registeredInputs.set(args.name, args.inputs);
        return { id: `id-${args.name}`, state: args.inputs };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

afterAll(async () => {
  await server.close();
});

function value<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

describe.each(["v1", "v2"] as const)("network volume lookups over REST %s", (dialect) => {
  const client = () => new RunpodClient({ apiKey: API_KEY, restUrl: `${origin}/${dialect}`, maxRetries: 0 });

  it("finds exactly one volume by id with one list call", async () => {
    const before = server.listCalls;
    const volume = await getNetworkVolume({ id: "vol-c3" }, { client: client() });
    expect(volume).toMatchObject({ id: "vol-c3", name: "datasets", size: 20, dataCenterId: "EU-RO-1" });
    expect(server.listCalls - before).toBe(1);
  });

  it("finds a volume by a unique name", async () => {
    const volume = await getNetworkVolume({ name: "scratch" }, { client: client() });
    expect(volume.id).toBe("vol-d4");
  });

  it("picks one of several same-named volumes by dataCenterId", async () => {
    const volume = await getNetworkVolume({ name: "models", dataCenterId: "US-KS-2" }, { client: client() });
    expect(volume.id).toBe("vol-b2");
  });

  it("rejects a name that matches several volumes, listing their ids and data centres", async () => {
    const error = await getNetworkVolume({ name: "models" }, { client: client() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_error", path: ["name"] });
    const message = (error as Error).message;
    expect(message).toContain('2 network volumes are named "models"');
    expect(message).toContain("vol-a1 (EU-RO-1)");
    expect(message).toContain("vol-b2 (US-KS-2)");
    expect(message).toMatch(/Pass `id`, or `dataCenterId`/);
  });

  it("rejects an unknown name, listing what exists", async () => {
    const error = await getNetworkVolume({ name: "nope" }, { client: client() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_error", path: ["name"] });
    const message = (error as Error).message;
    expect(message).toContain('No network volume is named "nope"');
    for (const v of VOLUMES) expect(message).toContain(`${v.id} "${v.name}" (${v.dataCenterId})`);
  });

  it("rejects an unknown id, listing what exists", async () => {
    const error = await getNetworkVolume({ id: "vol-zz" }, { client: client() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_error", path: ["id"] });
    expect((error as Error).message).toContain('No network volume has id "vol-zz". Existing volumes (4)');
  });

  it("says the account has no volumes when the list is empty", async () => {
    server.volumes = [];
    try {
      const error = await getNetworkVolume({ name: "models" }, { client: client() }).catch((e: unknown) => e);
      expect((error as Error).message).toContain("The account has no network volumes.");
    } finally {
      server.volumes = VOLUMES;
    }
  });

  it("caps the list of existing volumes at 20 in an error", async () => {
    server.volumes = Array.from({ length: 25 }, (_, i) => ({
      id: `vol-${i}`,
      name: `v${i}`,
      size: 10,
      dataCenterId: "EU-RO-1",
    }));
    try {
      const error = await getNetworkVolume({ id: "missing" }, { client: client() }).catch((e: unknown) => e);
      const message = (error as Error).message;
      expect(message).toContain("Existing volumes (25)");
      expect(message).toContain('vol-19 "v19"');
      expect(message).not.toContain('vol-20 "v20"');
      expect(message).toContain("and 5 more");
    } finally {
      server.volumes = VOLUMES;
    }
  });

  it("lists volumes filtered by data centre and name: 0, 1 and many matches", async () => {
    const c = client();
    expect(await getNetworkVolumes({ name: "nope" }, { client: c })).toEqual([]);
    expect((await getNetworkVolumes({ name: "datasets" }, { client: c })).map((v) => v.id)).toEqual([
      "vol-c3",
    ]);
    expect((await getNetworkVolumes({ dataCenterId: "EU-RO-1" }, { client: c })).map((v) => v.id)).toEqual([
      "vol-a1",
      "vol-c3",
    ]);
    expect((await getNetworkVolumes({}, { client: c })).map((v) => v.id)).toEqual(VOLUMES.map((v) => v.id));
  });

  it("resolves Output arguments in the Output forms", async () => {
    const one = getNetworkVolumeOutput(
      { name: pulumi.output("models"), dataCenterId: pulumi.output("EU-RO-1") },
      {
        client: client(),
      },
    );
    expect(await value(one.id)).toBe("vol-a1");
    const many = getNetworkVolumesOutput({ dataCenterId: pulumi.output("US-KS-2") }, { client: client() });
    expect(await value(many.apply((vs) => vs.map((v) => v.id)))).toEqual(["vol-b2", "vol-d4"]);
  });

  it("feeds a looked-up id into another resource's inputs", async () => {
    const volume = getNetworkVolumeOutput({ id: "vol-b2" }, { client: client() });
    const consumer = new Consumer(`consumer-${dialect}`, { networkVolumeId: volume.id });
    expect(await value(consumer.urn)).toContain(`consumer-${dialect}`);
    expect(registeredInputs.get(`consumer-${dialect}`)).toMatchObject({ networkVolumeId: "vol-b2" });
  });
});

describe("network volume lookup settings and argument checks", () => {
  it("reads the key and restUrl from stack config when no client is given", async () => {
    pulumi.runtime.setAllConfig({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${origin}/v2` }, [
      "runpod:apiKey",
    ]);
    try {
      const volume = await getNetworkVolume({ name: "datasets" });
      expect(volume.id).toBe("vol-c3");
    } finally {
      pulumi.runtime.setAllConfig({});
    }
  });

  it("takes explicit settings instead of the stack's", async () => {
    const volumes = await getNetworkVolumes(
      { name: "scratch" },
      { settings: { apiKey: API_KEY, restUrl: `${origin}/v1` } },
    );
    expect(volumes.map((v) => v.id)).toEqual(["vol-d4"]);
  });

  it.each([
    [{}, ["id"], "exactly one of id or name (got neither)"],
    [{ id: "a", name: "b" }, ["name"], "exactly one of id or name (got both)"],
    [{ id: "" }, ["id"], "id must not be empty"],
    [{ name: "  " }, ["name"], "name must not be empty"],
    [{ name: 5 }, ["name"], "name must be a string, got number"],
    [{ name: "m", dataCenterId: "" }, ["dataCenterId"], "dataCenterId must not be empty"],
    [{ id: "a", dataCenterId: "EU-RO-1" }, ["dataCenterId"], "omit it with id"],
    [{ nmae: "typo" }, ["nmae"], "unknown argument nmae"],
  ])("rejects getNetworkVolume(%j) before any request, naming %j", async (args, path, text) => {
    const before = server.listCalls;
    const error = await getNetworkVolume(args as never, {
      settings: { apiKey: API_KEY, restUrl: `${origin}/v1` },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_error", path });
    expect((error as Error).message).toContain(text);
    expect(server.listCalls).toBe(before);
  });

  it("rejects bad getNetworkVolumes filters naming the property", async () => {
    const error = await getNetworkVolumes(
      { dataCenterId: "" },
      { client: undefined, settings: { apiKey: API_KEY } },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_error", path: ["dataCenterId"] });
  });

  it("names both the stack config key and the environment variable when no key is set", async () => {
    const saved = process.env.RUNPOD_API_KEY;
    delete process.env.RUNPOD_API_KEY;
    try {
      const error = await getNetworkVolumes({}, { settings: { restUrl: `${origin}/v1` } }).catch(
        (e: unknown) => e,
      );
      expect((error as Error).message).toMatch(/runpod:apiKey.*RUNPOD_API_KEY/s);
    } finally {
      if (saved !== undefined) process.env.RUNPOD_API_KEY = saved;
    }
  });
});
