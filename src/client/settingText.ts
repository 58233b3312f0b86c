/**
 * The one rule for a setting's text, shared by the client's options and the providers' stack
 * config: trimmed, and whitespace only counts as unset. No imports: the package root loads it.
 */

/** A setting's value trimmed, or `undefined` when it is unset or blank (whitespace only). */
export const nonBlank = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim();
