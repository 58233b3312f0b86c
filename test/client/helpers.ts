/** Shared set-up of the client tests: a scripted server and a client pointed at it. */
import { RunpodClient, type RunpodClientOptions } from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

export const API_KEY = "rpa_TESTKEY_do_not_leak_0123456789";

/** Records retry and poll pauses instead of sleeping. */
export function recordingSleep(): {
  sleeps: number[];
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
} {
  const sleeps: number[] = [];
  return {
    sleeps,
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      if (signal?.aborted) throw signal.reason;
    },
  };
}

/** A client against `server` with no rate limits, instant retries and the given overrides. */
export function clientFor(server: ScriptedServer, options: RunpodClientOptions = {}): RunpodClient {
  return new RunpodClient({
    apiKey: API_KEY,
    restUrl: `${server.url}/v1`,
    serverlessUrl: server.url,
    rateLimits: false,
    sleep: async () => {},
    env: {},
    ...options,
  });
}

export async function withServer<T>(fn: (server: ScriptedServer) => Promise<T>): Promise<T> {
  const server = await startScriptedServer();
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

export const job = (status: string, extra: Record<string, unknown> = {}) => ({
  id: "job-1",
  status,
  ...extra,
});
