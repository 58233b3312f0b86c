/** The worker-log store: its bounds, line splitting, cursors and forgetting. */
import { describe, expect, it } from "vitest";
import {
  eventId,
  GONE_WORKER_LOGS_KEPT,
  LOG_LINE_MAX_CHARS,
  parseCursor,
  WORKER_LOG_MAX_LINES,
  WorkerLogs,
} from "../../src/emulator/jobs/workerLogs";

describe("WorkerLogs", () => {
  it("keeps the last WORKER_LOG_MAX_LINES lines of a worker", () => {
    const logs = new WorkerLogs();
    logs.open("ep", "w1");
    for (let i = 0; i < WORKER_LOG_MAX_LINES + 10; i++) logs.write("w1", 0, "container", `line ${i}`);
    const kept = logs.lines("w1");
    expect(kept).toHaveLength(WORKER_LOG_MAX_LINES);
    expect(kept[0]?.line).toBe("line 10");
  });

  it("makes one line per text line and cuts a line over LOG_LINE_MAX_CHARS", () => {
    const logs = new WorkerLogs();
    logs.open("ep", "w1");
    logs.write("w1", 0, "container", "a\r\nb\nc");
    logs.write("w1", 0, "container", "x".repeat(LOG_LINE_MAX_CHARS + 1));
    const kept = logs.lines("w1").map((l) => l.line);
    expect(kept.slice(0, 3)).toEqual(["a", "b", "c"]);
    expect(kept[3]).toBe(`${"x".repeat(LOG_LINE_MAX_CHARS)}... [line cut]`);
  });

  it("keeps the logs of the last GONE_WORKER_LOGS_KEPT gone workers, and none of a forgotten endpoint", () => {
    const logs = new WorkerLogs();
    for (let i = 0; i <= GONE_WORKER_LOGS_KEPT; i++) {
      logs.open("ep", `w${i}`);
      logs.write(`w${i}`, 0, "system", "created");
      logs.close(`w${i}`);
    }
    expect(logs.has("ep", "w0")).toBe(false);
    expect(logs.has("ep", "w1")).toBe(true);
    expect(logs.has("other", "w1")).toBe(false);
    logs.open("other", "o1");
    let ended = false;
    logs.subscribe(
      "o1",
      () => {},
      () => {
        ended = true;
      },
    );
    logs.forgetEndpoint("other");
    expect(ended).toBe(true);
    expect(logs.has("other", "o1")).toBe(false);
  });

  it("ignores lines written after a worker is gone", () => {
    const logs = new WorkerLogs();
    logs.open("ep", "w1");
    logs.close("w1");
    logs.write("w1", 0, "container", "late");
    expect(logs.lines("w1")).toEqual([]);
  });
});

describe("cursors", () => {
  it("resume after an event id's sequence, or after a bare time; anything else is no cursor", () => {
    const id = eventId({ seq: 42, at: Date.parse("2026-06-01T12:05:04Z"), source: "system", line: "x" });
    expect(id).toBe("2026-06-01T12:05:04.000Z/000000000042");
    expect(parseCursor(id)).toEqual({ afterSeq: 42 });
    expect(parseCursor("2026-06-01T12:05:04Z")).toEqual({ fromAt: Date.parse("2026-06-01T12:05:04Z") });
    expect(parseCursor("soon")).toBeUndefined();
  });
});
