/** Moved to `./shared` (one module of what the providers share); kept until every import moves. */
export { describeError, describeType, isUnknown, UNKNOWN } from "./shared";
