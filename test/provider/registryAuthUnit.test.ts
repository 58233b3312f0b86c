/**
 * ContainerRegistryAuth operations without a network: check's wording, and how create explains
 * the outcomes a host test cannot produce cheaply (a client timeout, duplicate names appearing).
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, expectTypeOf, it } from "vitest";
import { APIError, APITimeoutError } from "../../src/client/errors";
import type { ContainerRegistryAuth } from "../../src/client/schemas";
import { UNKNOWN } from "../../src/provider/common/unknown";
import {
  checkRegistryAuth,
  createRegistryAuth,
  createWithClient,
  type RegistryAuthInputs,
} from "../../src/provider/containerRegistryAuth/operations";
import type { ContainerRegistryAuthArgs } from "../../src/provider/containerRegistryAuth/resource";
import { findMismatches } from "../../src/provider/smokeTestJob/match";

describe("registry auth check", () => {
  it("describes a wrong type with the same words as JobRun's output diff", async () => {
    const { failures } = await checkRegistryAuth({}, { name: ["a", "b"], username: "u", password: "p" });
    const jobRunWords = findMismatches("x", ["a", "b"]).mismatches[0]?.actual;
    expect(jobRunWords).toMatch(/^an array of 2 items/);
    expect(failures).toEqual([
      { property: "name", reason: "name must be a string, got an array of 2 items" },
    ]);
  });

  it("treats null as not given: a required field is missing, adoptExisting is left out", async () => {
    const result = await checkRegistryAuth(
      {},
      { name: null, username: "u", password: "p", adoptExisting: null },
    );
    expect(result).toEqual({
      inputs: { username: "u", password: "p" },
      // A missing value names no property: the engine would print `{<nil>}`.
      failures: [{ property: "", reason: "name is required: a non-empty string" }],
    });
  });

  it("reports one failure per field, and returns the given arguments without __provider", async () => {
    const result = await checkRegistryAuth(
      {},
      { name: "", username: "u", password: " ", __provider: "text" },
    );
    expect(result).toEqual({
      inputs: { name: "", username: "u", password: " " },
      failures: [
        { property: "name", reason: "name must not be empty" },
        // The engine prints a named property's value whole: a password failure names no property.
        { property: "", reason: "password must not be empty" },
      ],
    });
  });

  it("does not judge unknown values, but fails an unknown property whatever its value", async () => {
    const { failures } = await checkRegistryAuth(
      {},
      { name: UNKNOWN, username: UNKNOWN, password: UNKNOWN, adoptExisting: UNKNOWN, colour: UNKNOWN },
    );
    expect(failures).toEqual([
      {
        property: "",
        reason: "unknown property colour; allowed: name, username, password, adoptExisting",
      },
    ]);
  });

  it("has public args naming exactly the schema's fields, with the same plain types", () => {
    expectTypeOf<pulumi.Unwrap<ContainerRegistryAuthArgs>>().toEqualTypeOf<RegistryAuthInputs>();
  });
});

/** A scripted client: each list answers the next of `lists`; the POST fails with `postError`. */
function scripted(lists: ContainerRegistryAuth[][], postError: unknown) {
  const calls: string[] = [];
  const client = {
    registryAuths: {
      list: async () => {
        calls.push("list");
        return lists.shift() ?? [];
      },
      create: async () => {
        calls.push("create");
        throw postError;
      },
    },
  };
  return { client: client as unknown as Parameters<typeof createWithClient>[0], calls };
}

const inputs = { name: "ghcr", username: "u", password: "pw-1234" };

async function createFailure(lists: ContainerRegistryAuth[][], postError: unknown): Promise<Error> {
  const { client } = scripted(lists, postError);
  const error = await createWithClient(client, inputs).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("registry auth create after an unclear POST", () => {
  it("after a timeout with nothing listed, says the credential may still appear and how to resolve it", async () => {
    const timeout = new APITimeoutError("POST /v2/registries timed out after 60000 ms");
    const error = await createFailure([[], []], timeout);
    expect(error.message).toContain("may still complete on the service");
    expect(error.message).toContain("one may appear in the next minutes, and it would be this deploy's");
    expect(error.message).toContain("set adoptExisting: true (or delete it) and run pulumi up again");
    expect(error.message).not.toContain("did not store it");
  });

  it("when two credentials with the name appeared, names both and says this deploy cannot tell which is its own", async () => {
    const error = await createFailure(
      [
        [],
        [
          { id: "a1", name: "ghcr" },
          { id: "b2", name: "ghcr" },
        ],
      ],
      APIError.from({ status: 500, method: "POST", path: "/v2/registries" }),
    );
    expect(error.message).toContain('2 credentials named "ghcr" exist now (id a1, b2)');
    expect(error.message).toContain("cannot tell which one is its own");
    expect(error.message).not.toContain("did not store it");
  });

  it("after a 500 with nothing listed, says nothing was created", async () => {
    const error = await createFailure(
      [[], []],
      APIError.from({ status: 500, method: "POST", path: "/v2/registries" }),
    );
    expect(error.message).toContain("the service did not store it, so nothing was created");
  });
});

describe("registry auth errors and the password", () => {
  it("throws an error that carries no copy of the password, even in the service's echoed body", async () => {
    const password = "echoed-in-body-Pa55-31ab";
    // The service lists nothing, then refuses the POST, echoing the request in a field the message does not show.
    const server = http.createServer((req, res) => {
      const body =
        req.method === "GET"
          ? []
          : { message: "invalid registry credentials", request: { username: "u", password } };
      res.writeHead(req.method === "GET" ? 200 : 400, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const restUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const error = await createRegistryAuth(
        { apiKey: "unit-key-1234", restUrl },
        { name: "n", username: "u", password },
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain("invalid registry credentials");
      expect(inspect(error, { depth: 10 })).not.toContain(password);
      expect(error).not.toHaveProperty("body");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
