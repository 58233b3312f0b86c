import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { APIError } from "../../src/client/errors";
import { redactError } from "../../src/provider/common/engineText";

describe("redactError", () => {
  const secret = "hunter2-very-secret";

  it("redacts the secret from message and stack and drops the body and cause that held it", () => {
    const error = APIError.from({
      status: 400,
      method: "POST",
      path: "/v2/ep/run",
      body: { error: `bad secret ${secret}`, echo: { secret } },
    });
    const clean = redactError(error, [secret]);
    expect(clean.message).toBe("POST /v2/ep/run failed with 400: bad secret [redacted]");
    expect(clean.name).toBe(error.name);
    expect(clean.stack).not.toContain(secret);
    expect(inspect(clean, { depth: 10 })).not.toContain(secret);
    expect(clean).not.toHaveProperty("body");
  });

  it("redacts a secret that reads JSON-escaped inside a quoted body", () => {
    const password = 'pa"ss\\word';
    const message = `POST /v1/containerregistryauth failed with 400: ${JSON.stringify({ password })}`;
    const clean = redactError(new Error(message), [password]);
    expect(clean.message).not.toContain('pa\\"ss');
    expect(clean.message).toContain("[redacted]");
  });

  it("keeps id and properties so a partial failure stays a partial failure", () => {
    const failed = Object.assign(new Error(`job failed: ${secret}`), {
      id: "run-1",
      properties: { status: "FAILED" },
    });
    const clean = redactError(failed, [secret, undefined, "ab"]) as Error & {
      id?: string;
      properties?: unknown;
    };
    expect(clean.message).toBe("job failed: [redacted]");
    expect(clean.id).toBe("run-1");
    expect(clean.properties).toEqual({ status: "FAILED" });
  });

  // The host prints a failed check/diff/read/delete as `${e}: ${e.stack}`
  // (sdk/nodejs/cmd/dynamic-provider/index.ts) and the CLI shows that under the stack.
  it("prints an expected failure, as the host writes it, as one `error: <message>` line, no stack", () => {
    const clean = redactError(
      APIError.from({ status: 409, method: "DELETE", path: "/v2/templates/t1", body: {} }),
      [],
    );
    expect(`${clean}: ${clean.stack}`).toBe(`error: ${clean.message}`);
    expect(clean.message).toMatch(/^DELETE \/v2\/templates\/t1 failed with 409/);
  });

  it("keeps the (redacted) stack of a bug: a TypeError is no expected failure", () => {
    const clean = redactError(new TypeError(`x is undefined near ${secret}`), [secret]);
    expect(`${clean}: ${clean.stack}`).toMatch(
      /^TypeError: x is undefined near \[redacted\]: TypeError: .*\n\s+at /,
    );
  });
});
