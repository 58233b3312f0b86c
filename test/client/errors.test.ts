/**
 * Errors keep working when two copies of the package meet (the provider host may load its own):
 * `instanceof` goes by the `Symbol.for` brand and the class name, not by object identity.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";

type ErrorsModule = typeof import("../../src/client/errors");
const built = path.resolve(__dirname, "../../dist/client/errors.js");

/** Loads a fresh copy of the built errors module (as a second installed copy would be). */
function freshCopy(): ErrorsModule {
  delete require.cache[built];
  return require(built) as ErrorsModule;
}

describe("errors across two copies of the package", () => {
  const a = freshCopy();
  const b = freshCopy();

  it("are two distinct module instances", () => {
    expect(a.NotFoundError).not.toBe(b.NotFoundError);
  });

  it("instanceof matches the same class and its ancestors from the other copy", () => {
    const error = a.APIError.from({ status: 404, body: { message: "no such job" } });
    expect(error).toBeInstanceOf(b.NotFoundError);
    expect(error).toBeInstanceOf(b.APIError);
    expect(error).toBeInstanceOf(b.RunpodError);
    expect(error.code).toBe("not_found");
  });

  it("instanceof rejects a sibling class and plain errors", () => {
    const error = a.APIError.from({ status: 404 });
    expect(error).not.toBeInstanceOf(b.ConflictError);
    expect(error).not.toBeInstanceOf(b.ValidationError);
    expect(new Error("plain")).not.toBeInstanceOf(b.RunpodError);
    expect({ code: "not_found" }).not.toBeInstanceOf(b.RunpodError);
  });

  it("maps each status to its class, with a stable code", () => {
    const cases: [number, string, string][] = [
      [400, "BadRequestError", "bad_request"],
      [401, "AuthenticationError", "authentication_error"],
      [403, "PermissionDeniedError", "permission_denied"],
      [404, "NotFoundError", "not_found"],
      [409, "ConflictError", "conflict"],
      [422, "UnprocessableEntityError", "unprocessable_entity"],
      [429, "RateLimitError", "rate_limited"],
      [500, "InternalServerError", "internal_server_error"],
      [503, "InternalServerError", "internal_server_error"],
      [418, "APIError", "api_error"],
    ];
    for (const [status, name, code] of cases) {
      const error = a.APIError.from({ status });
      expect([status, error.name, error.code]).toEqual([status, name, code]);
    }
  });
});
