/**
 * Shared harness of the emulator tests: start an emulator (ManualClock by default, so tests drive
 * time) and call it over HTTP with plain undici.
 */
import { request } from "undici";
import { ManualClock } from "../../src/emulator/clock";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/index";

export const KEY = "test-key";

/** An answer, body parsed as JSON when there is one. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A running emulator with its clock and a caller. */
export interface Harness {
  emu: RunningEmulator;
  clock: ManualClock;
  /** `path` is absolute (`/v2/echo/run`, `/v1/networkvolumes`). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  close(): Promise<void>;
}

/** Starts an emulator with key `KEY`, a ManualClock and no rate limits unless `options` says otherwise. */
export async function harness(options: EmulatorOptions = {}): Promise<Harness> {
  const clock = (options.clock as ManualClock | undefined) ?? new ManualClock();
  const emu = await startEmulator({ apiKeys: [KEY], rateLimits: false, ...options, clock });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await request(`${emu.serverlessUrl}${path}`, {
      method: method as "GET",
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.statusCode, headers: res.headers, body: parsed };
  };
  return { emu, clock, call, close: () => emu.close() };
}

/** Polls `/status` (settling the clock between tries) until `status` is reached; fails after 50 tries. */
export async function untilStatus(h: Harness, endpoint: string, id: string, status: string): Promise<Answer> {
  let last: Answer | undefined;
  for (let i = 0; i < 50; i++) {
    last = await h.call("GET", `/v2/${endpoint}/status/${id}`);
    if (last.body?.status === status) return last;
    await h.clock.settle();
  }
  throw new Error(`job ${id} never reached ${status}; last answer ${JSON.stringify(last?.body)}`);
}
