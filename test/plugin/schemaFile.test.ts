/**
 * The committed package schema, `docs/reference/runpod-native.schema.json` (`npm run gen:schema`),
 * is what the built plugin answers `GetSchema` with, asked over gRPC as the engine and
 * `pulumi package add` ask it: a schema change not regenerated and committed fails here, in CI too
 * (the build does not write the file). Needs the build.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pb, providerClient, startPluginProcess, startStubEngine } from "./pluginKit";

const FILE = path.join(__dirname, "..", "..", "docs", "reference", "runpod-native.schema.json");

describe("the committed package schema", () => {
  let engine: Awaited<ReturnType<typeof startStubEngine>>;
  let plugin: Awaited<ReturnType<typeof startPluginProcess>>;
  beforeAll(async () => {
    engine = await startStubEngine();
    plugin = await startPluginProcess(engine.address);
  });
  afterAll(async () => {
    await plugin?.close();
    engine?.close();
  });

  it("is what the plugin answers GetSchema with (else: npm run gen:schema, and commit it)", async () => {
    const rpc = providerClient(plugin.port);
    try {
      const answered = JSON.parse((await rpc.call("getSchema", new pb.GetSchemaRequest())).getSchema());
      const committed = JSON.parse(readFileSync(FILE, "utf8"));
      expect(committed, "docs/reference/runpod-native.schema.json is stale: run npm run gen:schema").toEqual(
        answered,
      );
      expect(Object.keys(committed.resources).length).toBeGreaterThan(0);
    } finally {
      rpc.close();
    }
  });
});
