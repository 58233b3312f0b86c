import { describe, expect, it } from "vitest";
import { resolveSettings } from "../../src/provider/config";

const source = (values: Record<string, string>) => ({ get: (key: string) => values[key] });

describe("runpod:* settings resolution", () => {
  it("counts a whitespace-only stack config value as unset and falls back to the environment", () => {
    const settings = resolveSettings(source({ "runpod:apiKey": "   ", "runpod:restUrl": "\t" }), {
      RUNPOD_API_KEY: "env-key",
      RUNPOD_REST_API_URL: "http://127.0.0.1:9/v2",
    });
    expect(settings).toEqual({
      apiKey: "env-key",
      restUrl: "http://127.0.0.1:9/v2",
      serverlessUrl: undefined,
    });
  });

  it("trims values the way the client does, so ' key ' and 'key' are the same setting", () => {
    const settings = resolveSettings(source({ "runpod:restUrl": "  http://127.0.0.1:9/v1  " }), {
      RUNPOD_API_KEY: "  env-key\n",
      RUNPOD_SERVERLESS_API_URL: "   ",
    });
    expect(settings).toEqual({
      apiKey: "env-key",
      restUrl: "http://127.0.0.1:9/v1",
      serverlessUrl: undefined,
    });
  });
});
