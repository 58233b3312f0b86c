/** Moved to `./shared` (one module of what the providers share); kept until every import moves. */
export {
  REDACTED,
  redact,
  redactError,
  redactValue,
  type Secret,
  withProviderErrors,
  withReasons,
} from "./shared";
