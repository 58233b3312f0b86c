/** The service limits moved to `src/wire/limits.ts` (shared with the emulator); this path stays for old imports. */
export * from "../wire/limits";
