/**
 * createReconciled: the create of an endpoint, template or volume never leaves a duplicate. Each
 * test scripts what the service holds before and after the POST and how the POST fails.
 */
import { describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  BadRequestError,
  NotFoundError,
} from "../../src/client";
import { createReconciled, deleteIfPresent, readOrGone } from "../../src/provider/common/managedCreate";

interface Obj {
  id: string;
  name: string;
}

/** A service whose list answers `lists` in turn and whose POST does `post`. */
function service(lists: Obj[][], post: () => Promise<Obj>) {
  const calls: string[] = [];
  return {
    calls,
    options: {
      kind: "serverless endpoint",
      name: "api",
      list: async () => {
        calls.push("list");
        const next = lists.shift();
        if (next === undefined) throw new APIConnectionError("connection refused", { notSent: true });
        return next;
      },
      create: async () => {
        calls.push("create");
        return post();
      },
    },
  };
}

const serverError = () =>
  APIError.from({ status: 500, body: { message: "boom" }, method: "POST", path: "/serverless" });

describe("createReconciled", () => {
  it("returns the created object after one list and one POST", async () => {
    const s = service([[{ id: "old", name: "api" }]], async () => ({ id: "new", name: "api" }));
    await expect(createReconciled(s.options)).resolves.toEqual({ record: { id: "new", name: "api" } });
    expect(s.calls).toEqual(["list", "create"]);
  });

  it("records the one new object of that name after a 500 the service acted on, ignoring older namesakes", async () => {
    const s = service(
      [
        [{ id: "old", name: "api" }],
        [
          { id: "old", name: "api" },
          { id: "made", name: "api" },
          { id: "other", name: "web" },
        ],
      ],
      async () => {
        throw serverError();
      },
    );
    const result = await createReconciled(s.options);
    expect(result.record).toEqual({ id: "made", name: "api" });
    expect(result.recoveredAfter).toMatch(/created it anyway \(id made/);
    expect(s.calls).toEqual(["list", "create", "list"]);
  });

  it("says nothing was created when the list after a reset shows no new object", async () => {
    const s = service([[], []], async () => {
      throw new APIConnectionError("socket hang up");
    });
    await expect(createReconciled(s.options)).rejects.toThrow(
      /the service did not create it, so nothing was created/,
    );
  });

  it("warns that the object may still appear after a timeout with nothing listed yet", async () => {
    const s = service([[], []], async () => {
      throw new APITimeoutError("timed out");
    });
    await expect(createReconciled(s.options)).rejects.toThrow(/may still complete on the service/);
  });

  it("refuses to guess between two new objects of that name", async () => {
    const s = service(
      [
        [],
        [
          { id: "a", name: "api" },
          { id: "b", name: "api" },
        ],
      ],
      async () => {
        throw serverError();
      },
    );
    await expect(createReconciled(s.options)).rejects.toThrow(
      /2 new serverless endpoints named "api" exist now \(id a, b\)/,
    );
  });

  it("says to look in the console when the list after the failure fails too", async () => {
    const s = service([[]], async () => {
      throw serverError();
    });
    await expect(createReconciled(s.options)).rejects.toThrow(/listing to check also failed.*delete it/s);
  });

  it("passes a refusal (400) through without listing again: the service did not act", async () => {
    const s = service([[]], async () => {
      throw APIError.from({ status: 400, body: { message: "bad pool" } });
    });
    await expect(createReconciled(s.options)).rejects.toBeInstanceOf(BadRequestError);
    expect(s.calls).toEqual(["list", "create"]);
  });
});

describe("readOrGone and deleteIfPresent", () => {
  const notFound = () => APIError.from({ status: 404, body: { message: "not found" } });

  it("treat a 404 as gone and rethrow anything else", async () => {
    await expect(readOrGone(async () => 1)).resolves.toBe(1);
    await expect(
      readOrGone(async () => {
        throw notFound();
      }),
    ).resolves.toBeUndefined();
    await expect(
      deleteIfPresent(async () => {
        throw notFound();
      }),
    ).resolves.toBe(false);
    await expect(deleteIfPresent(async () => undefined)).resolves.toBe(true);
    await expect(
      deleteIfPresent(async () => {
        throw serverError();
      }),
    ).rejects.toBeInstanceOf(APIError);
    expect(notFound()).toBeInstanceOf(NotFoundError);
  });
});
