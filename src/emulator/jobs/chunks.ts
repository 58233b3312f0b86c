/**
 * Stream chunks are at most 1 MB (1,000,000 bytes of JSON for the whole `{"output": ...}` chunk).
 * A larger string is split into substrings and a larger array into sub-arrays, in order; any
 * other oversized value cannot be split and fails the job with a clear error.
 */
import { STREAM_CHUNK_LIMIT_BYTES } from "../../wire/limits";

/** A stream chunk as sent. */
export interface Chunk {
  output: unknown;
  metrics?: Record<string, unknown>;
}

const ENVELOPE = Buffer.byteLength('{"output":}');

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "null");
}

function splitString(s: string, budget: number): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < s.length) {
    // Each char costs at least one byte of JSON, so `budget - 2` chars is an upper bound.
    let lo = start + 1;
    let hi = Math.min(s.length, start + budget - 2);
    // Largest end in [lo, hi] whose slice fits: binary search.
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (jsonBytes(s.slice(start, mid)) <= budget) lo = mid;
      else hi = mid - 1;
    }
    let end = lo;
    // Never cut a surrogate pair in two.
    const code = s.charCodeAt(end - 1);
    if (end < s.length && end - start > 1 && code >= 0xd800 && code <= 0xdbff) end--;
    parts.push(s.slice(start, end));
    start = end;
  }
  return parts;
}

function splitArray(items: unknown[], budget: number): unknown[][] {
  const parts: unknown[][] = [];
  let current: unknown[] = [];
  let size = 2; // "[]"
  for (const [index, item] of items.entries()) {
    const bytes = jsonBytes(item);
    if (bytes + 2 > budget) {
      throw new Error(
        `stream item element [${index}] is ${bytes} bytes of JSON; a stream chunk is at most ${STREAM_CHUNK_LIMIT_BYTES} bytes and only strings and arrays can be split`,
      );
    }
    const added = bytes + (current.length > 0 ? 1 : 0);
    if (size + added > budget && current.length > 0) {
      parts.push(current);
      current = [];
      size = 2;
    }
    size += bytes + (current.length > 0 ? 1 : 0);
    current.push(item);
  }
  if (current.length > 0 || parts.length === 0) parts.push(current);
  return parts;
}

/**
 * The chunks that carry `value` (normally one). Throws when `value` is over the limit and is
 * neither a string nor an array.
 * @param limit  chunk size limit in bytes. @default STREAM_CHUNK_LIMIT_BYTES (1,000,000)
 */
export function toChunks(value: unknown, limit = STREAM_CHUNK_LIMIT_BYTES): Chunk[] {
  const budget = limit - ENVELOPE;
  const bytes = jsonBytes(value);
  if (bytes <= budget) return [{ output: value }];
  if (typeof value === "string") return splitString(value, budget).map((output) => ({ output }));
  if (Array.isArray(value)) return splitArray(value, budget).map((output) => ({ output }));
  throw new Error(
    `a stream item is ${bytes} bytes of JSON; a stream chunk is at most ${limit} bytes and only strings and arrays can be split`,
  );
}
