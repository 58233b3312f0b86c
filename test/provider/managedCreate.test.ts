/**
 * createReconciled: the create of an endpoint, template or volume never leaves a duplicate. Each
 * test scripts what the service holds before and after the POST and how the POST fails.
 */
import { describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  NotFoundError,
  RunpodError,
  type Template,
} from "../../src/client";
import {
  createReconciled,
  deleteIfPresent,
  RELIST_WINDOW_MS,
  readOrGone,
} from "../../src/provider/common/managedCreate";
import { volumeDifferences } from "../../src/provider/networkVolume/operations";
import { OMITTED_MEANS } from "../../src/provider/template/args";
import { templateDifferences } from "../../src/provider/template/operations";

interface Obj {
  id: string;
  name: string;
  /** What the create sends is size 10 (when a listed object has a size, it must be 10). */
  size?: number;
}

/**
 * A service whose list answers `lists` in turn (then refuses the connection) and whose POST does
 * `post`. Its clock only moves when the create waits between re-lists, so no test sleeps.
 */
function service(lists: Obj[][], post: () => Promise<Obj>) {
  const calls: string[] = [];
  let clock = 0;
  return {
    calls,
    elapsed: () => clock,
    options: {
      kind: "serverless endpoint",
      name: "api",
      differences: (listed: Obj) => (listed.size === undefined || listed.size === 10 ? [] : ["size"]),
      now: () => clock,
      sleep: async (ms: number) => {
        calls.push(`sleep ${ms}`);
        clock += ms;
      },
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

  it("never claims nothing was created when the lists after a reset stay empty: it names what to look for", async () => {
    const s = service([[], [], [], [], [], [], [], [], [], []], async () => {
      throw new APIConnectionError("socket hang up");
    });
    const error = await createReconciled(s.options).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/may or may not have created it/);
    expect(error?.message).toMatch(/look in the RunPod console for a serverless endpoint named "api"/);
    expect(error?.message).not.toMatch(/nothing was created|did not create it/);
    // Re-listed, backing off, and gave up within the fixed bound.
    expect(s.calls.filter((c) => c === "list").length).toBeGreaterThan(2);
    expect(s.elapsed()).toBeLessThanOrEqual(RELIST_WINDOW_MS);
  });

  it("finds the object a lagging list shows only on a later re-list, and records it", async () => {
    const s = service([[], [], [], [{ id: "made", name: "api", size: 10 }]], async () => {
      throw serverError();
    });
    const result = await createReconciled(s.options);
    expect(result.record.id).toBe("made");
    expect(s.calls).toEqual(["list", "create", "list", "sleep 500", "list", "sleep 1000", "list"]);
  });

  it("keeps re-listing no longer than the bound the resource sets", async () => {
    const s = service(
      Array.from({ length: 50 }, () => []),
      async () => {
        throw new APITimeoutError("timed out");
      },
    );
    await expect(createReconciled({ ...s.options, relistWindowMs: 2000 })).rejects.toThrow(
      /may still exist or appear/,
    );
    expect(s.elapsed()).toBeLessThanOrEqual(2000);
    expect(s.calls.filter((c) => c === "list").length).toBe(4); // one before the POST, three after
  });

  it("does not record another client's new object of the same name that differs from what was sent", async () => {
    const s = service(
      [[], ...Array.from({ length: 10 }, () => [{ id: "theirs", name: "api", size: 20 }])],
      async () => {
        throw serverError();
      },
    );
    const error = await createReconciled(s.options).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(RunpodError);
    expect(error?.message).toMatch(/id theirs \(differs in size\)/);
    expect(error?.message).toMatch(/another client's and was neither recorded nor changed/);
    expect(error?.message).toMatch(/serverless endpoint named "api"/);
  });

  it("records the new object that matches what was sent, beside another client's namesake that does not", async () => {
    const s = service(
      [
        [],
        [
          { id: "theirs", name: "api", size: 20 },
          { id: "mine", name: "api", size: 10 },
        ],
      ],
      async () => {
        throw serverError();
      },
    );
    const result = await createReconciled(s.options);
    expect(result.record.id).toBe("mine");
    expect(result.recoveredAfter).toMatch(
      /id theirs \(differs in size\), is not this create's and was left alone/,
    );
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

  it("says to look in the console when every list after the failure fails too", async () => {
    const s = service([[]], async () => {
      throw serverError();
    });
    await expect(createReconciled(s.options)).rejects.toThrow(/listing to check also failed.*delete it/s);
  });

  it("lists again after an abort that cut the POST on the wire, and records the object the service made", async () => {
    const s = service(
      [
        [{ id: "old", name: "api" }],
        [
          { id: "old", name: "api" },
          { id: "made", name: "api", size: 10 },
        ],
      ],
      async () => {
        throw new APIUserAbortError("Request was aborted.", { sent: true });
      },
    );
    const result = await createReconciled(s.options);
    expect(result.record).toEqual({ id: "made", name: "api", size: 10 });
    expect(result.recoveredAfter).toMatch(/created it anyway \(id made/);
    expect(s.calls).toEqual(["list", "create", "list"]);
  });

  it("passes an abort that came before the POST was sent through without listing again", async () => {
    const s = service([[]], async () => {
      throw new APIUserAbortError("Request was aborted.", { sent: false });
    });
    await expect(createReconciled(s.options)).rejects.toBeInstanceOf(APIUserAbortError);
    expect(s.calls).toEqual(["list", "create"]);
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

describe("each resource's match for a listed namesake", () => {
  it("a network volume matches in any letter case of its data centre and type, and not at another size", () => {
    const sent = { name: "data", size: 50, dataCenterId: "EU-RO-1", type: "STANDARD" };
    expect(
      volumeDifferences({ id: "v", name: "data", size: 50, dataCenterId: "eu-ro-1", type: "standard" }, sent),
    ).toEqual([]);
    expect(
      volumeDifferences(
        { id: "v", name: "data", size: 100, dataCenterId: "US-KS-2", type: "STANDARD" },
        sent,
      ),
    ).toEqual(["size", "dataCenterId"]);
    // type omitted: the service chose it, any type holds it.
    const { type: _type, ...untyped } = sent;
    expect(
      volumeDifferences(
        { id: "v", name: "data", size: 50, dataCenterId: "EU-RO-1", type: "HIGH_PERFORMANCE" },
        untyped,
      ),
    ).toEqual([]);
  });

  it("a template matches only with the image and fields sent", () => {
    // As the service answers a template created with only name and image: its defaults filled in.
    const listed = { id: "t", name: "web", image: "nginx:1", ...OMITTED_MEANS } as unknown as Template;
    expect(templateDifferences(listed, { name: "web", image: "nginx:1" })).toEqual([]);
    expect(templateDifferences(listed, { name: "web", image: "nginx:2" })).toEqual(["image"]);
    expect(templateDifferences(listed, { name: "web", image: "nginx:1", env: { A: "1" } })).toEqual(["env"]);
  });
});

describe("createReconciled of an object that bills (a volume, an endpoint), answered 429 or 503", () => {
  const notActed = (status: 429 | 503) =>
    APIError.from({ status, body: { message: "busy" }, method: "POST", path: "/serverless" });
  /** A list that shows nothing is looked at twice more, 0.5 s and 1 s later: a list may lag. */
  const relists = ["sleep 500", "list", "sleep 1000", "list"];
  /** The list before the first POST, the POST answered 429 or 503, a pause, and the lists that settle it. */
  const firstPostSettled = ["list", "create", "sleep 1000", "list", ...relists];

  it("records the object a 503 made, after one POST, a pause and one list", async () => {
    const s = service([[], [{ id: "made", name: "api", size: 10 }]], async () => {
      throw notActed(503);
    });
    const result = await createReconciled({ ...s.options, bills: true });
    expect(result.record.id).toBe("made");
    expect(result.recoveredAfter).toBe(
      'Creating serverless endpoint "api" was answered 503, but the service had created it anyway (id made, the ' +
        'one new serverless endpoint named "api" holding what was sent), so it was recorded and not created again.',
    );
    expect(s.calls).toEqual(["list", "create", "sleep 1000", "list"]);
  });

  it("POSTs again after a 429 only once a list shows nothing made, three POSTs at most, then throws the 429", async () => {
    const s = service([[], [], [], [], [], [], []], async () => {
      throw notActed(429);
    });
    const error = await createReconciled({ ...s.options, bills: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as APIError).status).toBe(429);
    expect(s.calls).toEqual([...firstPostSettled, "create", "sleep 2000", "list", ...relists, "create"]);
  });

  it("sends no POST once the deployment is cancelled: none when cancelled before it, no resend after a 503", async () => {
    const cancelled = new AbortController();
    cancelled.abort(new Error("cancelled"));
    const before = service([[]], async () => ({ id: "new", name: "api" }));
    await expect(createReconciled({ ...before.options, signal: cancelled.signal })).rejects.toThrow(
      'Serverless endpoint "api" was not created: the deployment was cancelled (Ctrl-C) before it was sent; ' +
        "nothing was sent to RunPod. Run pulumi up again to create it.",
    );
    expect(before.calls).toEqual(["list"]);

    // Cancelled while the 503 was on its way back: the lists that settle it still run, then no resend.
    const during = new AbortController();
    const after = service([[], [], [], []], async () => {
      during.abort(new Error("cancelled"));
      throw notActed(503);
    });
    await expect(createReconciled({ ...after.options, bills: true, signal: during.signal })).rejects.toThrow(
      'Serverless endpoint "api" was not created: RunPod answered 503, a list shows that made none, and the ' +
        "deployment was cancelled (Ctrl-C) before it was sent again; nothing was created. Run pulumi up again " +
        "to create it.",
    );
    expect(after.calls).toEqual(firstPostSettled);
  });

  it("leaves a namesake holding other values alone and POSTs again", async () => {
    let posts = 0;
    const theirs = [{ id: "theirs", name: "api", size: 20 }];
    const s = service([[], theirs, theirs, theirs], async () => {
      posts++;
      if (posts === 1) throw notActed(503);
      return { id: "mine", name: "api", size: 10 };
    });
    const result = await createReconciled({ ...s.options, bills: true });
    expect(result).toEqual({ record: { id: "mine", name: "api", size: 10 } });
    expect(s.calls).toEqual([...firstPostSettled, "create"]);
  });

  it("does not POST again when the list after a 503 fails, and says the object may exist", async () => {
    const s = service([[]], async () => {
      throw notActed(503);
    });
    const error = await createReconciled({ ...s.options, bills: true }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toBe(
      'Creating serverless endpoint "api" was answered 503, and the service may have created it anyway (it has ' +
        "been seen to act on a create it answered 429 or 503 to); listing to check before sending it again failed " +
        "(connection refused). It was not sent again and nothing was recorded. Before running pulumi up again, look " +
        'in the RunPod console for a serverless endpoint named "api" made just now: if it is there, delete it, or ' +
        "the next up creates a second one.",
    );
    // The failed list is the last call: no second "create".
    expect(s.calls).toEqual(["list", "create", "sleep 1000", "list"]);
  });

  it("throws a 503 at once for an object that does not bill (a template): the client already resent it", async () => {
    const s = service([[]], async () => {
      throw notActed(503);
    });
    await expect(createReconciled(s.options)).rejects.toMatchObject({ status: 503 });
    expect(s.calls).toEqual(["list", "create"]);
  });
});
