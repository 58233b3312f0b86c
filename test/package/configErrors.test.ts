/** Errors about settings name what the user set: the stack config key or the variable. */
import { describe, expect, it } from "vitest";
import { AuthenticationError } from "../../src/client/errors";
import { redactError } from "../../src/provider/common/engineText";
import { clientFromSettings, resolveSettings } from "../../src/provider/config";

const config = (values: Record<string, string>) => ({ get: (key: string) => values[key] });

describe("settings errors name what the user set", () => {
  it("names runpod:restUrl when a malformed REST URL came from stack config", () => {
    const settings = resolveSettings(config({ "runpod:apiKey": "k", "runpod:restUrl": "not a url" }), {});
    expect(() => clientFromSettings(settings)).toThrow(
      /stack config "runpod:restUrl".*pulumi config set runpod:restUrl/,
    );
  });

  it("names RUNPOD_SERVERLESS_API_URL when a malformed serverless URL came from the environment", () => {
    const settings = resolveSettings(config({ "runpod:apiKey": "k" }), {
      RUNPOD_SERVERLESS_API_URL: "ftp://x",
    });
    expect(() => clientFromSettings(settings)).toThrow(/environment variable RUNPOD_SERVERLESS_API_URL/);
  });

  it("lets a jobs-only caller (JobRun) build its client although restUrl is malformed", () => {
    const settings = resolveSettings(config({ "runpod:apiKey": "k", "runpod:restUrl": "::bad::" }), {
      RUNPOD_REST_API_URL: "also bad",
    });
    const client = clientFromSettings(settings, {}, { rest: false });
    expect(client.endpoint("echo").id).toBe("echo");
    expect(() => clientFromSettings(settings)).toThrow(/runpod:restUrl/);
  });
});

describe("a 401 from a provider operation", () => {
  it("names runpod:apiKey and RUNPOD_API_KEY", () => {
    const error = redactError(
      new AuthenticationError("401 Unauthorized: invalid api key", { status: 401 }),
      [],
    );
    expect(error.message).toMatch(/runpod:apiKey.*RUNPOD_API_KEY/);
  });
});
