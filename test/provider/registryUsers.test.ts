/**
 * `registryUsers` (what names a registry credential, read before the provider deletes it) against
 * a scripted REST v2 server on 127.0.0.1: users of every kind are found by their `registry`, and a
 * kind the API key may not list (403) is reported unchecked instead of failing the delete.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { consequences, describeUsers, registryUsers } from "../../src/provider/containerRegistryAuth/users";

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Serves `answers[path]` as JSON (status 200), or a 403 problem for a path mapped to 403. */
async function scripted(answers: Record<string, unknown>): Promise<RunpodClient> {
  server = createServer((req, res) => {
    const answer = answers[req.url ?? ""];
    if (answer === 403) {
      res.writeHead(403, { "content-type": "application/problem+json" });
      res.end(JSON.stringify({ title: "Forbidden", status: 403, detail: "key may not read pods" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return new RunpodClient({
    apiKey: "k",
    restUrl: `http://127.0.0.1:${port}/v2`,
    maxRetries: 0,
    rateLimits: false,
  });
}

describe("registryUsers", () => {
  it("reports a kind the key may not list as unchecked and still finds the others' users", async () => {
    const client = await scripted({
      "/v2/pods": 403,
      "/v2/templates": {
        templates: [
          { id: "t1", name: "model", registry: "reg1" },
          { id: "t2", name: "other", registry: null },
        ],
      },
      "/v2/serverless": { endpoints: [{ id: "e1", name: "api", registry: "reg1" }] },
    });
    const found = await registryUsers(client, "reg1");
    expect(found.unchecked).toEqual(["pod"]);
    expect(found.users).toEqual([
      { kind: "template", id: "t1", name: "model" },
      { kind: "serverless endpoint", id: "e1", name: "api" },
    ]);
    expect(describeUsers(found.users)).toBe('template t1 ("model") and serverless endpoint e1 ("api")');
    expect(consequences(found.users)).not.toContain("RunPod refuses");
  });
});
