/**
 * Errors keep working when two copies of the package meet (the provider host may load its own):
 * `instanceof` goes by each class's own `Symbol.for` brand, not by object identity nor by the
 * class's name in code (which a rename or a minifier changes).
 */
import { readFileSync } from "node:fs";
import Module from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";

type ErrorsModule = typeof import("../../src/client/errors");
const built = path.resolve(__dirname, "../../dist/client/errors.js");

/** Loads a fresh copy of the built errors module (as a second installed copy would be). */
function freshCopy(): ErrorsModule {
  delete require.cache[built];
  return require(built) as ErrorsModule;
}

const CLASS_NAMES = [
  "RunpodError",
  "APIError",
  "BadRequestError",
  "AuthenticationError",
  "PermissionDeniedError",
  "NotFoundError",
  "ConflictError",
  "UnprocessableEntityError",
  "RateLimitError",
  "InternalServerError",
  "APIConnectionError",
  "APITimeoutError",
  "APIUserAbortError",
  "ValidationError",
  "ResponseValidationError",
  "JobWaitTimeoutError",
  "EndpointRolloutError",
  "RolloutTimeoutError",
  "JobRunSubmitError",
  "JobRunFailedError",
] as const;

/**
 * A copy of the built errors module whose classes are renamed in code (`NotFoundError` becomes
 * `m_NotFoundError`), as a refactor or a minifier would, exported under the same names.
 * String literals (the published names) and `exports.X` are left as they are.
 */
function renamedCopy(): ErrorsModule {
  let source = readFileSync(built, "utf8");
  for (const name of CLASS_NAMES)
    source = source.replace(new RegExp(`(?<!["'.])\\b${name}\\b`, "g"), `m_${name}`);
  const filename = path.join(path.dirname(built), "errors.renamed.js");
  const copy = new Module(filename) as Module & { _compile(code: string, filename: string): void };
  copy.filename = filename;
  copy.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(
    path.dirname(filename),
  );
  copy._compile(source, filename);
  return copy.exports as ErrorsModule;
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

describe("errors from a copy whose classes were renamed (a refactor or a minified build)", () => {
  const renamed = renamedCopy();
  const b = freshCopy();

  it("really renamed the classes", () => {
    expect(renamed.NotFoundError.name).toBe("m_NotFoundError");
  });

  it("keep instanceof for the same class and every ancestor of the other copy", () => {
    const error = renamed.APIError.from({ status: 429, body: { message: "slow down" } });
    expect(error).toBeInstanceOf(b.RateLimitError);
    expect(error).toBeInstanceOf(b.APIError);
    expect(error).toBeInstanceOf(b.RunpodError);
    expect(error).not.toBeInstanceOf(b.NotFoundError);
    const timeout = new renamed.APITimeoutError("slow");
    expect(timeout).toBeInstanceOf(b.APITimeoutError);
    expect(timeout).toBeInstanceOf(b.APIConnectionError);
    expect(timeout).not.toBeInstanceOf(b.APIUserAbortError);
    // And the other way round.
    expect(new b.ValidationError("bad", ["x"])).toBeInstanceOf(renamed.ValidationError);
    expect(new b.ValidationError("bad", ["x"])).not.toBeInstanceOf(renamed.ResponseValidationError);
  });

  it("keep their published name", () => {
    expect(renamed.APIError.from({ status: 404 }).name).toBe("NotFoundError");
    expect(new renamed.JobWaitTimeoutError("t", { jobId: "j", lastStatus: null }).name).toBe(
      "JobWaitTimeoutError",
    );
  });

  it("each class has its own brand", () => {
    for (const name of CLASS_NAMES) {
      const brand = Symbol.for(`pulumi-runpod-dynamic.error.${name}`);
      expect([name, (b[name].prototype as unknown as Record<symbol, unknown>)[brand]]).toEqual([name, true]);
    }
  });

  it("a subclass declared outside the package keeps ordinary instanceof", () => {
    class MyError extends b.APIError {}
    const mine = new MyError("x", { status: 400 });
    expect(mine).toBeInstanceOf(MyError);
    expect(mine).toBeInstanceOf(b.APIError);
    expect(b.APIError.from({ status: 400 })).not.toBeInstanceOf(MyError);
  });
});
