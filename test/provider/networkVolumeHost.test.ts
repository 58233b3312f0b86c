/**
 * NetworkVolume through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized
 * from the INSTALLED package (test/support/globalSetup.ts), against the emulator, in both REST
 * dialects with the same assertions where they apply (`type` and its replacement exist only in v2).
 *
 * The host reaches the emulator through a small pass-through proxy (below) that a test can arm to
 * lose an answer after the emulator acted or answer in the emulator's place; unarmed it forwards
 * everything unchanged and records what it saw.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { NotFoundError, RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { FaultProxy } from "../support/faultProxy.mts";
import {
  HostError,
  type ProviderHost,
  startProviderHost,
  UNKNOWN,
  urnFor,
} from "../support/providerHost.mts";
import { serializedProvider } from "../support/serializedProvider.mts";

const API_KEY = "volume-host-key-5c1a9f";
const projectDir = inject("installedProjectDir");

const errorsSeen: string[] = [];

/** Runs `fn`, expecting a HostError; records its message for the secret scan. */
async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  errorsSeen.push((error as HostError).message);
  return error as HostError;
}

/** The shrink refusal's advice, the same wherever it is raised. */
const SHRINK_ADVICE =
  "a network volume cannot shrink, and replacing it would delete its data. Set size to 50 or more. To start " +
  "over with a smaller volume, give this resource a new name in the program (pulumi up then creates the new " +
  "volume and deletes this one with its data), or remove it from the program, run pulumi up, and add it back.";

describe.each([
  ["v1", (emu: RunningEmulator) => emu.restUrlV1],
  ["v2", (emu: RunningEmulator) => emu.restUrlV2],
] as const)("NetworkVolume in the provider host, REST %s", (dialect, restUrlOf) => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  /** Talks to the emulator directly in this dialect: plays changes made outside Pulumi. */
  let client: RunpodClient;
  /** REST v2 (serverless endpoints exist only there), same store. */
  let v2: RunpodClient;
  let n = 0;
  const collection = dialect === "v1" ? /\/v1\/networkvolumes$/ : /\/v2\/network-volumes$/;
  const v2Only = dialect === "v2";
  /** The tier the emulator gives a v2 volume created without `type`; v1 shows none. */
  const defaultType = v2Only ? { type: "STANDARD" } : {};

  /** A fresh name per test: the emulator is shared by the tests of this dialect. */
  const fresh = (base: string) => `${base}-${dialect}-${++n}`;
  const urn = (name: string) => urnFor("NetworkVolume", name);

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    client = new RunpodClient({ apiKey: API_KEY, restUrl: restUrlOf(emu), maxRetries: 0 });
    v2 = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    // After a create answered 503, list after 10 ms, not 1 s (the pause: managedCreate.test.ts).
    host = await startProviderHost({ projectDir, createPauseMs: 10 });
    await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${proxy.url}/${dialect}` });
  });

  afterAll(async () => {
    const stderr = host?.stderr() ?? "";
    await host?.close();
    await proxy?.close();
    await emu?.close();
    expect(stderr).not.toContain(API_KEY);
    for (const message of errorsSeen) expect(message).not.toContain(API_KEY);
  });

  async function checked(
    resource: string,
    props: Record<string, unknown>,
    olds: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const { inputs, failures } = await host.check(urn(resource), olds, props);
    expect(failures).toEqual([]);
    return inputs;
  }

  async function create(resource: string, props: Record<string, unknown>) {
    const inputs = await checked(resource, props);
    const result = await host.create(urn(resource), inputs);
    return { ...result, inputs };
  }

  async function named(name: string) {
    return (await client.networkVolumes.list()).filter((v) => v.name === name);
  }

  const posts = (name: string) =>
    proxy.seen.filter((r) => r.method === "POST" && collection.test(r.path) && r.body.includes(name));

  it("creates the volume, uses the service's id, and outputs what the service reads back", async () => {
    const name = fresh("data");
    const { id, outs } = await create("data", { name, size: 20, dataCenterId: "EU-RO-1" });
    const { __provider, ...rest } = outs;
    expect(typeof __provider).toBe("string");
    // 20 GB at the list price of $0.07 per GB-month.
    expect(rest).toEqual({ name, size: 20, dataCenterId: "EU-RO-1", ...defaultType, monthlyCostUsd: 1.4 });
    expect(await client.networkVolumes.get(id)).toEqual({
      id,
      name,
      size: 20,
      dataCenterId: "EU-RO-1",
      ...defaultType,
    });
    expect(await named(name)).toHaveLength(1);
  });

  it("diffs: no change when nothing changed; name and size are in-place changes; dataCenterId replaces", async () => {
    const name = fresh("diff");
    const { id, outs, inputs } = await create("diff", { name, size: 20, dataCenterId: "EU-RO-1" });
    const d = (news: Record<string, unknown>) => host.diff(id, urn("diff"), outs, news);
    expect(await d(inputs)).toMatchObject({ changes: false, changesReported: "none", replaces: [] });
    expect(await d({ ...inputs, name: `${name}-2` })).toMatchObject({ changes: true, replaces: [] });
    expect(await d({ ...inputs, size: 30 })).toMatchObject({ changes: true, replaces: [] });
    expect(await d({ ...inputs, size: UNKNOWN })).toMatchObject({ changes: true, replaces: [] });
    const optIn = { allowReplaceDeletingData: true };
    expect(await d({ ...inputs, ...optIn, dataCenterId: "US-KS-2" })).toMatchObject({
      changes: true,
      replaces: ["dataCenterId"],
      deleteBeforeReplace: false,
    });
    expect(await d({ ...inputs, ...optIn, dataCenterId: UNKNOWN })).toMatchObject({
      replaces: ["dataCenterId"],
    });
    // Without the opt-in, a value not known yet is never planned as a replacement.
    expect(await d({ ...inputs, dataCenterId: UNKNOWN })).toMatchObject({ changes: true, replaces: [] });
  });

  it("plans no replacement when the data centre or tier reads back in another letter case", async () => {
    const name = fresh("case");
    const { id, outs, inputs } = await create("case", { name, size: 20, dataCenterId: "EU-RO-1" });
    const lower = { ...outs, dataCenterId: "eu-ro-1", ...(v2Only ? { type: "standard" } : {}) };
    const news = { ...inputs, ...(v2Only ? { type: "STANDARD" } : {}) };
    expect(await host.diff(id, urn("case"), lower, news)).toMatchObject({ changes: false, replaces: [] });
    // check compares the previous inputs the same way (a refresh may have written them).
    expect((await host.check(urn("case"), lower, news)).failures).toEqual([]);
  });

  it("refuses a replacement the program asks for without allowReplaceDeletingData, saying what would be lost", async () => {
    const name = fresh("keepdata");
    const { id, outs, inputs } = await create("keepdata", { name, size: 20, dataCenterId: "EU-RO-1" });
    const moved = { ...inputs, dataCenterId: "US-KS-2" };
    const refusal = (label: string) =>
      `dataCenterId EU-RO-1 -> US-KS-2: the service cannot change this on network volume ${label}, so this ` +
      "would replace it: a new, empty volume is created and this one is deleted with all its data (20 GB). " +
      "Nothing was changed. To keep the data, set the field back. To replace the volume and delete its data on " +
      "purpose, set allowReplaceDeletingData: true on this resource (and back to false after the up).";
    const { failures } = await host.check(urn("keepdata"), inputs, moved);
    expect(failures).toEqual([{ property: "", reason: refusal(`"${name}"`) }]);
    const error = await hostFailure(() => host.diff(id, urn("keepdata"), outs, moved));
    expect(error.message).toContain(refusal(`"${name}" (id ${id})`));
    expect(
      await host.check(urn("keepdata"), inputs, { ...moved, allowReplaceDeletingData: true }),
    ).toMatchObject({
      failures: [],
    });
  });

  it.runIf(v2Only)("diffs type: a different tier replaces, the same or none given is no change", async () => {
    const name = fresh("tier");
    const { id, outs, inputs } = await create("tier", { name, size: 20, dataCenterId: "EU-RO-1" });
    const d = (news: Record<string, unknown>) => host.diff(id, urn("tier"), outs, news);
    expect(await d({ ...inputs, type: "STANDARD" })).toMatchObject({ changes: false, replaces: [] });
    const optIn = { allowReplaceDeletingData: true };
    expect(await d({ ...inputs, ...optIn, type: "HIGH_PERFORMANCE" })).toMatchObject({
      changes: true,
      replaces: ["type"],
    });
    expect(await d({ ...inputs, ...optIn, type: UNKNOWN })).toMatchObject({ replaces: ["type"] });
  });

  it.runIf(v2Only)(
    "never plans a replacement on a tier a state written over REST v1 does not know",
    async () => {
      const name = fresh("migrated");
      const { id, outs, inputs } = await create("migrated", { name, size: 20, dataCenterId: "EU-RO-1" });
      const { type: _tier, ...v1Outs } = outs; // what a state written over REST v1 holds
      const same = { ...inputs, type: "STANDARD" };
      expect(await host.diff(id, urn("migrated"), v1Outs, same)).toMatchObject({
        changes: true,
        replaces: [],
      });
      const { outs: recorded } = await host.update(id, urn("migrated"), v1Outs, same);
      expect(recorded).toMatchObject({ name, size: 20, type: "STANDARD" });
      const other = { ...inputs, size: 30, type: "HIGH_PERFORMANCE" };
      expect(await host.diff(id, urn("migrated"), v1Outs, other)).toMatchObject({
        changes: true,
        replaces: [],
      });
      const patches = proxy.seen.filter((r) => r.method === "PATCH").length;
      const error = await hostFailure(() => host.update(id, urn("migrated"), v1Outs, other));
      expect(error.message).toContain(
        `network volume "${name}" (id ${id}) is STANDARD on the service, and the program asks for type ` +
          "HIGH_PERFORMANCE. The tier cannot change and this stack's state did not know it",
      );
      expect(error.message).toContain("nothing was changed");
      expect(proxy.seen.filter((r) => r.method === "PATCH").length).toBe(patches);
      expect(await client.networkVolumes.get(id)).toMatchObject({ size: 20, type: "STANDARD" });
    },
  );

  it("updates name and a larger size in place with one PATCH, keeping the id", async () => {
    const name = fresh("grow");
    const { id, outs } = await create("grow", { name, size: 20, dataCenterId: "EU-RO-1" });
    const news = await checked("grow", { name: `${name}-renamed`, size: 50, dataCenterId: "EU-RO-1" }, outs);
    const patches = () => proxy.seen.filter((r) => r.method === "PATCH").length;
    const before = patches();
    const { outs: updated } = await host.update(id, urn("grow"), outs, news);
    expect(patches()).toBe(before + 1);
    expect(updated).toMatchObject({
      name: `${name}-renamed`,
      size: 50,
      dataCenterId: "EU-RO-1",
      ...defaultType,
    });
    expect(await client.networkVolumes.get(id)).toMatchObject({ name: `${name}-renamed`, size: 50 });
  });

  it("replaces on a data centre change: the new volume is created, then the old one deleted", async () => {
    const name = fresh("move");
    const old = await create("move", { name, size: 20, dataCenterId: "EU-RO-1" });
    const news = await checked(
      "move",
      { name, size: 20, dataCenterId: "US-KS-2", allowReplaceDeletingData: true },
      old.inputs,
    );
    expect(await host.diff(old.id, urn("move"), old.outs, news)).toMatchObject({
      replaces: ["dataCenterId"],
    });
    // The engine's order for create-before-delete:
    const replacement = await host.create(urn("move"), news);
    await host.delete(old.id, urn("move"), old.outs);
    expect(replacement.id).not.toBe(old.id);
    expect(await named(name)).toEqual([
      { id: replacement.id, name, size: 20, dataCenterId: "US-KS-2", ...defaultType },
    ]);
  });

  it("refuses a smaller size in check, naming the sizes and what to do instead", async () => {
    const name = fresh("shrink");
    const { outs, inputs } = await create("shrink", { name, size: 50, dataCenterId: "EU-RO-1" });
    const { failures } = await host.check(urn("shrink"), inputs, { ...inputs, size: 20 });
    expect(failures).toEqual([
      {
        property: "size",
        reason: `size may only grow: the volume is 50 GB, the program asks for 20 GB; ${SHRINK_ADVICE}`,
      },
    ]);
    // The same size and a larger one pass; a smaller size on a new data centre is a new volume's.
    await checked("shrink", { ...inputs, size: 50 }, inputs);
    await checked(
      "shrink",
      { ...inputs, size: 20, dataCenterId: "US-KS-2", allowReplaceDeletingData: true },
      inputs,
    );
    expect(outs.size).toBe(50);
  });

  it("fails the preview (diff) and the update on a size below the one refresh read, without a request", async () => {
    const name = fresh("outgrown");
    const { id, outs, inputs } = await create("outgrown", { name, size: 20, dataCenterId: "EU-RO-1" });
    // Grown in the console; refresh records it in outputs AND inputs.
    await client.networkVolumes.update(id, { size: 50 });
    const refreshed = await host.read(id, urn("outgrown"), outs, inputs);
    expect(refreshed.props).toMatchObject({ size: 50 });
    expect(refreshed.inputs).toMatchObject({ name, size: 50, dataCenterId: "EU-RO-1" });
    const requests = proxy.seen.length;
    const diffError = await hostFailure(() => host.diff(id, urn("outgrown"), refreshed.props, inputs));
    expect(diffError.message).toContain(
      `size may only grow: the volume is 50 GB as last read from the service ("${name}", id ${id}), ` +
        `the program asks for 20 GB; ${SHRINK_ADVICE}`,
    );
    const updateError = await hostFailure(() => host.update(id, urn("outgrown"), refreshed.props, inputs));
    expect(updateError.message).toContain(`the volume is 50 GB (id ${id}), the program asks for 20 GB`);
    expect(proxy.seen.length).toBe(requests);
    expect((await client.networkVolumes.get(id)).size).toBe(50);
  });

  it("refreshes: no drift keeps the state, a rename and growth show as drift, a deleted volume is gone", async () => {
    const name = fresh("refresh");
    const { id, outs } = await create("refresh", { name, size: 20, dataCenterId: "EU-RO-1" });
    const same = await host.read(id, urn("refresh"), outs);
    expect(same).toMatchObject({ id, props: { name, size: 20, dataCenterId: "EU-RO-1", ...defaultType } });
    await client.networkVolumes.update(id, { name: `${name}-console`, size: 40 });
    const drifted = await host.read(id, urn("refresh"), outs);
    const expected = { name: `${name}-console`, size: 40, dataCenterId: "EU-RO-1", ...defaultType };
    expect(drifted.id).toBe(id);
    expect(drifted.props).toMatchObject(expected);
    expect(drifted.inputs).toMatchObject(expected);
    // The program's name now differs from the service's: an in-place rename back.
    const back = await checked("refresh", { name, size: 40, dataCenterId: "EU-RO-1" }, drifted.inputs);
    expect(await host.diff(id, urn("refresh"), drifted.props, back)).toMatchObject({
      changes: true,
      replaces: [],
    });
    await client.networkVolumes.delete(id);
    expect((await host.read(id, urn("refresh"), outs)).id).toBe("");
  });

  it("reads a volume by id alone, as NetworkVolume.get does; a wrong id fails naming it", async () => {
    const name = fresh("get");
    const theirs = await client.networkVolumes.create({ name, size: 30, dataCenterId: "EU-RO-1" });
    const read = await host.read(theirs.id, urn("get"), {});
    expect(read.id).toBe(theirs.id);
    expect(read.props).toMatchObject({ name, size: 30, dataCenterId: "EU-RO-1", ...defaultType });
    const error = await hostFailure(() => host.read("nosuchvol9", urn("get-missing"), {}));
    expect(error.message).toContain("no network volume with id nosuchvol9 in this account");
  });

  it("deletes, and a second delete of the same volume succeeds", async () => {
    const name = fresh("twice");
    const { id, outs } = await create("twice", { name, size: 20, dataCenterId: "EU-RO-1" });
    await host.delete(id, urn("twice"), outs);
    await expect(client.networkVolumes.get(id)).rejects.toBeInstanceOf(NotFoundError);
    await host.delete(id, urn("twice"), outs);
    expect(await named(name)).toEqual([]);
  });

  it("explains a delete refused because an endpoint attaches the volume, naming the endpoint", async () => {
    const name = fresh("attached");
    const { id, outs } = await create("attached", { name, size: 20, dataCenterId: "EU-RO-1" });
    const endpoint = await v2.serverless.create({
      name: `reader-${dialect}`,
      type: "QUEUE",
      image: "acme/model:1",
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 1 },
      networkVolumes: [id],
    });
    const error = await hostFailure(() => host.delete(id, urn("attached"), outs));
    expect(error.message).toContain(`RunPod refused to delete network volume "${name}" (id ${id}): `);
    expect(error.message).toContain(
      `network volume ${id} is attached to serverless endpoint ${endpoint.id} ("reader-${dialect}")`,
    );
    expect(error.message).toContain(
      "To delete it, detach it first: remove its id from the networkVolumes of each endpoint that holds it " +
        "(the networkVolumes argument of a ServerlessEndpoint) and run pulumi up, or delete those endpoints; " +
        "then run the destroy or update again.",
    );
    expect(await named(name)).toHaveLength(1);
    await v2.serverless.update(endpoint.id, { networkVolumes: [] });
    await host.delete(id, urn("attached"), outs);
    expect(await named(name)).toEqual([]);
    await v2.serverless.delete(endpoint.id);
  });

  it("records its own volume when the create's answer is lost after the service made it: exactly one exists", async () => {
    const name = fresh("lost");
    proxy.arm("POST", collection, { kind: "lose-after" });
    const { id, outs } = await create("lost", { name, size: 20, dataCenterId: "EU-RO-1" });
    expect(await named(name)).toEqual([{ id, name, size: 20, dataCenterId: "EU-RO-1", ...defaultType }]);
    expect(outs).toMatchObject({ name, size: 20 });
    expect(posts(name)).toHaveLength(1);
    expect(host.stderr()).toContain(`warning: Creating network volume "${name}" failed (`);
    expect(host.stderr()).toContain(`so it was recorded.`);
  });

  it("records its own volume when the service made it but answered 500: exactly one exists", async () => {
    const name = fresh("500");
    proxy.arm("POST", collection, { kind: "fail-after" });
    const { id } = await create("five-hundred", { name, size: 20, dataCenterId: "EU-RO-1" });
    expect((await named(name)).map((v) => v.id)).toEqual([id]);
    expect(posts(name)).toHaveLength(1);
  });

  it("records its own volume when the service made it but answered 503: one POST, exactly one exists", async () => {
    const name = fresh("503");
    proxy.arm("POST", collection, { kind: "fail-after", status: 503 });
    const { id } = await create("five-oh-three", { name, size: 20, dataCenterId: "EU-RO-1" });
    expect((await named(name)).map((v) => v.id)).toEqual([id]);
    expect(posts(name)).toHaveLength(1);
    expect(host.stderr()).toContain(
      `warning: Creating network volume "${name}" was answered 503, but the service had created it anyway (id ${id},`,
    );
  });

  it("rejects bad input in check, one failure per argument, without any request", async () => {
    const before = proxy.seen.length;
    const { failures } = await host.check(urn("bad"), {}, { name: "  ", size: 12.5, colour: "red" });
    // A missing value and an unknown argument name no property: the engine would print
    // `{<nil>}`, or the typo'd value whole.
    expect(failures).toEqual([
      { property: "name", reason: "name must not be empty" },
      { property: "size", reason: "size must be an integer number of GB, got 12.5" },
      { property: "", reason: "dataCenterId is required: a non-empty string" },
      {
        property: "",
        reason: "unknown property colour; allowed: name, size, dataCenterId, type, allowReplaceDeletingData",
      },
    ]);
    const fail = async (props: Record<string, unknown>) =>
      (await host.check(urn("bad"), {}, { name: "n", size: 20, dataCenterId: "EU-RO-1", ...props })).failures;
    expect(await fail({ size: undefined })).toEqual([
      { property: "", reason: "size is required: an integer number of GB" },
    ]);
    expect(await fail({ size: "20" })).toEqual([
      { property: "size", reason: "size must be an integer number of GB, got a string" },
    ]);
    expect(await fail({ dataCenterId: 7 })).toEqual([
      { property: "dataCenterId", reason: "dataCenterId must be a string, got a number" },
    ]);
    expect(await fail({ type: "FAST" })).toEqual([
      { property: "type", reason: "type must be STANDARD or HIGH_PERFORMANCE" },
    ]);
    if (dialect === "v1") {
      expect(await fail({ size: 4001 })).toEqual([
        { property: "size", reason: "size must be from 0 to 4000 GB on REST v1, got 4001" },
      ]);
      expect(await fail({ type: "HIGH_PERFORMANCE" })).toEqual([
        {
          property: "type",
          reason:
            "type: REST v1 has no volume types (STANDARD and HIGH_PERFORMANCE exist only in REST v2); " +
            "omit type, or set runpod:restUrl to a URL ending in /v2",
        },
      ]);
    } else {
      expect(await fail({ size: 5 })).toEqual([
        { property: "size", reason: "size must be from 10 to 4096 GB on REST v2, got 5" },
      ]);
      expect(await fail({ size: 4097 })).toEqual([
        { property: "size", reason: "size must be from 10 to 4096 GB on REST v2, got 4097" },
      ]);
      expect(await fail({ type: "HIGH_PERFORMANCE" })).toEqual([]);
    }
    expect(proxy.seen.length).toBe(before);
  });

  it("accepts unknown values in check (preview) and passes them through", async () => {
    const props = { name: UNKNOWN, size: UNKNOWN, dataCenterId: UNKNOWN, type: UNKNOWN };
    const { inputs, failures } = await host.check(urn("preview"), { name: "n", size: 50 }, props);
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject(props);
  });

  it.runIf(v2Only)("creates a HIGH_PERFORMANCE volume when type asks for one", async () => {
    const name = fresh("fast");
    const { id, outs } = await create("fast", {
      name,
      size: 20,
      dataCenterId: "EU-RO-1",
      type: "HIGH_PERFORMANCE",
    });
    expect(outs.type).toBe("HIGH_PERFORMANCE");
    expect((await client.networkVolumes.get(id)).type).toBe("HIGH_PERFORMANCE");
  });
});

describe("NetworkVolume provider: serialization", () => {
  it("keeps __provider small and free of the key when serialized from the installed package", async () => {
    const text = await serializedProvider(projectDir, "NetworkVolume");
    const bytes = Buffer.byteLength(text, "utf8");
    console.info(`__provider of NetworkVolume from the installed package: ${bytes} bytes`);
    expect(bytes).toBeLessThanOrEqual(8 * 1024);
    expect(text).toContain(
      'operationsModule = "pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js"',
    );
    expect(text).not.toContain(API_KEY);
  });
});
