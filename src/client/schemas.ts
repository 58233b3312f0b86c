/** The wire schemas moved to `src/wire/schemas.ts` (shared with the emulator); this path stays for old imports. */
export * from "../wire/schemas";
