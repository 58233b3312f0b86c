/**
 * EcrDelegation through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized
 * from the INSTALLED package (test/support/globalSetup.ts), against the emulator over REST v2
 * (delegations do not exist in v1: a v1 `runpod:restUrl` fails check).
 *
 * The host reaches the emulator through a pass-through proxy that a test can arm to lose an
 * answer after the emulator acted. A delegation has no secret of its own: the afterAll scans every
 * output, error and the host's stderr for the API key.
 *
 * After a lost answer the host re-lists for 1 s instead of 10 s (`RELIST_WINDOW_MS`, through
 * `fastWaits.cjs`): the test whose own delegation never appears ends after two lists, not after
 * 7.5 s of real pauses. The window's rule itself is tested on a fake clock (managedCreate.test.ts).
 * After a 429 or 503 it lists after 10 ms instead of 1 s (`SETTLE_FIRST_PAUSE_MS`), likewise.
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import type { FaultProxy } from "../support/faultProxy.mts";
import {
  HostError,
  type ProviderHost,
  startProviderHost,
  UNKNOWN,
  urnFor,
} from "../support/providerHost.mts";
import { type ResourceHostRig, startResourceHostRig } from "./resourceHostKit";

const API_KEY = "ecr-delegation-host-key-7d2f0b";
const ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";

const projectDir = inject("installedProjectDir");
/** The provider host's environment: this process's without RUNPOD_*, re-list window shortened. */
const hostEnv = (): NodeJS.ProcessEnv => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RUNPOD_")));
  const preload = `--require ${JSON.stringify(path.join(__dirname, "..", "support", "fastWaits.cjs"))}`;
  return {
    ...env,
    NODE_OPTIONS: env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ${preload}` : preload,
    PROVIDER_HOST_RELIST_WINDOW_MS: "1000",
    // After a create answered 429 or 503, list after 10 ms, not 1 s (the pause: managedCreate.test.ts).
    PROVIDER_HOST_CREATE_PAUSE_MS: "10",
  };
};
const urn = (name: string) => urnFor("EcrDelegation", name);

/** Every text a user could see, for the API-key scan in afterAll. */
const seenTexts: [string, string][] = [];

function expectNoKey(where: string, text: string): void {
  for (const form of [API_KEY, Buffer.from(API_KEY).toString("base64")]) {
    expect(text, `${where} holds the API key`).not.toContain(form);
  }
}

/** Runs `fn`, expecting a HostError; records its message for the scan. */
async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  const e = error as HostError;
  seenTexts.push(["error", `${e.message} ${JSON.stringify(e.properties ?? {})}`]);
  return e;
}

describe("EcrDelegation in the provider host (REST v2)", () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  let client: RunpodClient;
  let __provider: string;
  let n = 0;
  const fresh = (base: string) => `${base}-${++n}`;

  let rig: ResourceHostRig | undefined;

  beforeAll(async () => {
    rig = await startResourceHostRig({
      apiKey: API_KEY,
      className: "EcrDelegation",
      folder: "ecrDelegation",
      host: { env: hostEnv() },
    });
    ({ emu, proxy, host, client, __provider } = rig);
  });

  afterAll(async () => {
    const stderr = (await rig?.close()) ?? "";
    expectNoKey("host stderr", stderr);
    for (const [where, text] of seenTexts) expectNoKey(where, text);
  });

  const withProvider = (props: Record<string, unknown>) => ({ ...props, __provider });

  async function create(resource: string, props: Record<string, unknown>) {
    const { inputs, failures } = await host.check(urn(resource), {}, withProvider(props));
    expect(failures).toEqual([]);
    const result = await host.create(urn(resource), inputs);
    seenTexts.push([`create ${resource}`, JSON.stringify(result.outs)]);
    return { ...result, inputs };
  }

  const named = async (name: string) =>
    (await client.registries.delegations.list()).filter((d) => d.name === name);

  it("creates the delegation and outputs it as read back, with the resource given", async () => {
    const name = fresh("deploy");
    const before = proxy.seen.length;
    const { id, outs } = await create("deploy", { resource: `${ARN}:v7`, name });
    // One list (what existed before, for reconciling a lost answer), then one POST.
    expect(proxy.seen.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /v2/registries/delegations",
      "POST /v2/registries/delegations",
    ]);
    const [live] = await named(name);
    expect(live?.id).toBe(id);
    const { __provider: provider, ...fields } = outs;
    expect(typeof provider).toBe("string");
    // DESIGN: __provider <= 8 KB, and it loads its operations module by name, capturing nothing else.
    expect(Buffer.byteLength(provider as string, "utf8")).toBeLessThanOrEqual(8 * 1024);
    const paths = [...(provider as string).matchAll(/"(pulumi-runpod-dynamic\/[^"]*)"/g)].map((m) => m[1]);
    expect(new Set(paths)).toEqual(
      new Set(["pulumi-runpod-dynamic/dist/provider/ecrDelegation/operations.js"]),
    );
    expect(fields).toEqual({
      resource: `${ARN}:v7`,
      name,
      delegatorUserId: "user_emulator",
      awsUser: "418399314813",
      repository: "runpod/deployment",
      tag: "v7",
      awsRegion: "us-east-2",
      dockerRegistryUri: "418399314813.dkr.ecr.us-east-2.amazonaws.com",
      createdAt: live?.createdAt,
    });
  });

  it("creates one without a name: no name output, tag as the service answers", async () => {
    const { id, outs } = await create("unnamed", { resource: ARN });
    const { __provider: _p, ...fields } = outs;
    expect(fields).not.toHaveProperty("name");
    expect(fields).toMatchObject({ resource: ARN, tag: "latest", repository: "runpod/deployment" });
    await host.delete(id, urn("unnamed"), outs);
  });

  it("reports no change for the same inputs, and a replacement naming the field for any change", async () => {
    const name = fresh("diff");
    const { id, outs, inputs } = await create("diff", { resource: ARN, name });
    const d = (news: Record<string, unknown>) => host.diff(id, urn("diff"), outs, withProvider(news));
    expect(await d(inputs)).toMatchObject({ changes: false, changesReported: "none", replaces: [] });
    const cases: [Record<string, unknown>, string[]][] = [
      [{ resource: `${ARN}:v2` }, ["resource"]],
      [{ resource: "arn:aws:ecr:eu-west-1:418399314813:repository/runpod/deployment" }, ["resource"]],
      [{ name: `${name}-renamed` }, ["name"]],
      [{ name: undefined }, ["name"]],
      [{ resource: UNKNOWN }, ["resource"]],
      [{ resource: `${ARN}:v3`, name: "other" }, ["resource", "name"]],
    ];
    for (const [edit, replaces] of cases) {
      expect(await d({ ...inputs, ...edit }), JSON.stringify(edit)).toMatchObject({
        changes: true,
        replaces,
        deleteBeforeReplace: false,
      });
    }
    await host.delete(id, urn("diff"), outs);
  });

  it("replaces: the engine creates the new delegation, then revokes the old one", async () => {
    const name = fresh("replace");
    const old = await create("replace", { resource: ARN, name });
    const { inputs: news } = await host.check(
      urn("replace"),
      old.inputs,
      withProvider({ resource: `${ARN}:v2`, name }),
    );
    expect(await host.diff(old.id, urn("replace"), old.outs, news)).toMatchObject({ replaces: ["resource"] });
    const replacement = await host.create(urn("replace"), news);
    await host.delete(old.id, urn("replace"), old.outs);
    const left = await named(name);
    expect(left.map((d) => [d.id, d.tag])).toEqual([[replacement.id, "v2"]]);
    expect(replacement.id).not.toBe(old.id);
  });

  it("refreshes: unchanged keeps state and inputs, a delegation revoked outside Pulumi is gone (empty id)", async () => {
    const name = fresh("refresh");
    const { id, outs } = await create("refresh", { resource: ARN, name });
    const reads = proxy.seen.length;
    const same = await host.read(id, urn("refresh"), outs);
    expect(proxy.seen.slice(reads).map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /v2/registries/delegations",
    ]);
    expect(same.id).toBe(id);
    expect(same.props).toEqual(outs);
    expect(same.inputs).toEqual({ resource: ARN, name, __provider });
    await client.registries.delegations.revoke(id);
    expect((await host.read(id, urn("refresh"), outs)).id).toBe("");
  });

  it("keeps a delegation a lagging list leaves out once on refresh, listing again before dropping it", async () => {
    const name = fresh("lagging");
    const { id, outs } = await create("lagging", { resource: ARN, name });
    // The list lags: it leaves the new delegation out once.
    proxy.arm("GET", /^\/v2\/registries\/delegations$/, {
      kind: "rewrite",
      edit: (body) => ({
        ...body,
        delegations: (body.delegations as { id: string }[]).filter((d) => d.id !== id),
      }),
    });
    const reads = proxy.seen.length;
    const read = await host.read(id, urn("lagging"), outs);
    expect(proxy.seen.slice(reads).map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /v2/registries/delegations",
      "GET /v2/registries/delegations",
    ]);
    expect(read.id).toBe(id);
    expect(read.props).toEqual(outs);
  });

  it("reads a delegation by id alone, as EcrDelegation.get does, and names a wrong id", async () => {
    const name = fresh("get");
    const made = await client.registries.delegations.create({ resource: ARN, name });
    const read = await host.read(made.id, urn("get"), withProvider({}));
    expect(read.id).toBe(made.id);
    const { __provider: _p, ...props } = read.props;
    expect(props).toEqual({
      name,
      delegatorUserId: made.delegatorUserId,
      awsUser: made.awsUser,
      repository: made.repository,
      tag: made.tag,
      awsRegion: made.awsRegion,
      dockerRegistryUri: made.dockerRegistryUri,
      createdAt: made.createdAt,
    });
    const error = await hostFailure(() => host.read("deleg_nosuch", urn("get"), withProvider({})));
    expect(error.message).toContain("No ECR delegation with id deleg_nosuch in this account");
    expect(error.message).toContain("getEcrDelegations()");
  });

  it("deletes (revokes), and a second delete of the revoked delegation succeeds", async () => {
    const name = fresh("twice");
    const { id, outs } = await create("twice", { resource: ARN, name });
    await host.delete(id, urn("twice"), outs);
    expect(await named(name)).toEqual([]);
    const before = proxy.seen.length;
    await host.delete(id, urn("twice"), outs);
    expect(proxy.seen.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      `DELETE /v2/registries/delegations/${id}`,
    ]);
  });

  it.each([
    ["the answer is lost after the service created it", "lose-after"],
    ["the service answers 500 after creating it", "fail-after"],
  ] as const)("records exactly one delegation when %s", async (_what, kind) => {
    const name = fresh(`lost-${kind}`);
    proxy.arm("POST", /\/v2\/registries\/delegations$/, { kind });
    const before = proxy.seen.filter((r) => r.method === "POST").length;
    const { id, outs } = await create(`lost-${kind}`, { resource: ARN, name });
    expect(proxy.seen.filter((r) => r.method === "POST").length - before).toBe(1);
    expect((await named(name)).map((d) => d.id)).toEqual([id]);
    expect(outs).toMatchObject({ resource: ARN, name, repository: "runpod/deployment" });
    expect(host.stderr()).toContain(`warning: Creating ECR delegation "${name}" failed`);
  });

  it.each([429, 503])(
    "records exactly one delegation when the service creates it and answers %i (never a second POST)",
    async (status) => {
      const name = fresh(`throttled-${status}`);
      proxy.arm("POST", /\/v2\/registries\/delegations$/, { kind: "fail-after", status });
      const before = proxy.seen.filter((r) => r.method === "POST").length;
      const { id, outs } = await create(`throttled-${status}`, { resource: ARN, name });
      expect(proxy.seen.filter((r) => r.method === "POST").length - before).toBe(1);
      expect((await named(name)).map((d) => d.id)).toEqual([id]);
      expect(outs).toMatchObject({ resource: ARN, name, repository: "runpod/deployment" });
      expect(host.stderr()).toContain(`the service had created it anyway (id ${id}`);
    },
    60_000,
  );

  it("after a lost answer, leaves alone a new delegation of the same name for another repository", async () => {
    const name = fresh("lost-foreign");
    const other = "arn:aws:ecr:us-east-2:418399314813:repository/someone/else";
    proxy.arm("POST", /\/v2\/registries\/delegations$/, {
      kind: "lose-before",
      run: () => client.registries.delegations.create({ resource: other, name }),
    });
    const { inputs } = await host.check(urn("lost-foreign"), {}, withProvider({ resource: ARN, name }));
    const error = await hostFailure(() => host.create(urn("lost-foreign"), inputs));
    expect(error.message).toContain(`Creating ECR delegation "${name}" failed`);
    expect(error.message).toContain("differs in resource");
    expect(error.message).toContain("Nothing was recorded");
    expect((await named(name)).map((d) => d.repository)).toEqual(["someone/else"]);
  }, 60_000);

  it("names bad input in check, field by field, before any request", async () => {
    const before = proxy.seen.length;
    const { failures } = await host.check(
      urn("bad"),
      {},
      withProvider({
        resource: "418399314813.dkr.ecr.us-east-2.amazonaws.com/runpod/deployment",
        name: "",
        tag: "v1",
      }),
    );
    seenTexts.push(["check failures", JSON.stringify(failures)]);
    expect(failures).toEqual([
      {
        property: "resource",
        reason:
          "resource must be an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], " +
          "e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
      },
      { property: "name", reason: "name must not be empty" },
      { property: "", reason: "unknown property tag; allowed: resource, name" },
    ]);
    const missing = await host.check(urn("bad"), {}, withProvider({}));
    expect(missing.failures).toEqual([
      {
        property: "",
        reason:
          "resource is required: an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], " +
          "e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
      },
    ]);
    expect(proxy.seen.length).toBe(before);
  });

  it("accepts unknown values in check (preview) and passes them through", async () => {
    const { inputs, failures } = await host.check(
      urn("preview"),
      {},
      withProvider({ resource: UNKNOWN, name: UNKNOWN }),
    );
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject({ resource: UNKNOWN, name: UNKNOWN });
  });

  it("fails check on a REST v1 runpod:restUrl, saying delegations need REST v2", async () => {
    const v1Host = await startProviderHost({ projectDir });
    try {
      await v1Host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": emu.restUrlV1 });
      const { failures } = await v1Host.check(urn("v1"), {}, withProvider({ resource: ARN }));
      expect(failures).toEqual([
        {
          property: "",
          reason:
            `EcrDelegation needs the REST v2 interface, but runpod:restUrl is ${emu.restUrlV1}, REST v1 (retired ` +
            "2026-11-15; it never had ECR delegations). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
        },
      ]);
      expectNoKey("v1 host stderr", v1Host.stderr());
    } finally {
      await v1Host.close();
    }
  });
});
