/**
 * API-key checks. Keys are compared in constant time (SHA-256 of both sides, then
 * `crypto.timingSafeEqual`, against every configured key without an early exit), so response
 * timing reveals neither a key's length nor how much of it matched.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** Checks presented keys against the configured ones. */
export class KeyChecker {
  readonly #digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map((k) => createHash("sha256").update(k).digest());
  }

  /** True when `key` is one of the configured keys. */
  matches(key: string | undefined): boolean {
    const digest = createHash("sha256")
      .update(key ?? "")
      .digest();
    let ok = false;
    for (const d of this.#digests) ok = timingSafeEqual(d, digest) || ok;
    return ok && key !== undefined && key !== "";
  }

  /**
   * The key carried by an `Authorization` header: `Bearer KEY`, or (when `allowBare`, as the job
   * interface does) the bare `KEY`.
   */
  static extract(header: string | undefined, allowBare: boolean): string | undefined {
    if (header === undefined) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m) return m[1];
    if (!allowBare) return undefined;
    const bare = header.trim();
    return bare === "" || /\s/.test(bare) ? undefined : bare;
  }
}
