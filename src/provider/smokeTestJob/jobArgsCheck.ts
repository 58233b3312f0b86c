/**
 * The JobRun provider's `check`: the arguments judged against {@link JobRunArgsSchema} field by
 * field, without any network call, plus what the schema cannot say (the request's size limits,
 * the output schema's validity, the REST dialect). Values still unknown in a preview are not
 * judged; every failure names its field and what is allowed.
 */
import {
  describeIssue,
  formatPath,
  MB,
  RUN_PAYLOAD_LIMIT_BYTES,
  RUNSYNC_PAYLOAD_LIMIT_BYTES,
} from "../../client";
import { unknownArgFailures } from "../common/checkArgs";
import { containsUnknown, UNKNOWN } from "../common/unknown";
import { INPUT_REQUIRED, JOB_RUN_ARG_NAMES, JobRunArgsSchema } from "./jobArgs";
import { outputSchemaProblem } from "./outputSchema";

/** One failed field, as Pulumi's `CheckFailure` wants it. */
export interface CheckFailure {
  /** Dotted path of the field, e.g. `policy.ttl`. */
  property: string;
  /** What is wrong and what is allowed. */
  reason: string;
}

/** What `check` knows of the provider's settings. */
export interface CheckSettings {
  /** The REST dialect `runpod:restUrl` speaks; undefined when unknown. */
  restDialect?: "v1" | "v2";
}

/** True when `value`, or the value on the way to `path` inside it, is Pulumi's unknown sentinel. */
function unknownOnPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current: unknown = value;
  if (current === UNKNOWN) return true;
  for (const key of path) {
    if (current === null || typeof current !== "object") return false;
    current = (current as Record<PropertyKey, unknown>)[key];
    if (current === UNKNOWN) return true;
  }
  return false;
}

/**
 * Checks JobRun arguments field by field, without any network call. Values that are still
 * unknown (a preview) are not judged. `__provider` is ignored. Returns every failure found.
 * With `settings`, an explicit `rollout: "wait"` on a REST v1 `restUrl` fails here too.
 */
export function checkJobRunArgs(news: Record<string, unknown>, settings: CheckSettings = {}): CheckFailure[] {
  const { __provider: _provider, ...args } = news;
  const failures = checkFields(args);
  const schemaFailure = outputSchemaFailure(args.expect);
  if (schemaFailure !== undefined) failures.push(schemaFailure);
  if (args.rollout === "wait" && settings.restDialect === "v1") {
    failures.push({ property: "rollout", reason: ROLLOUT_NEEDS_V2 });
  }
  if (args.http !== undefined && settings.restDialect === "v1") {
    failures.push({ property: "http", reason: PROBE_NEEDS_V2 });
  }
  return failures;
}

/** Why `rollout: "wait"` cannot run on a REST v1 `restUrl`. */
export const ROLLOUT_NEEDS_V2 =
  'rollout "wait" reads the endpoint\'s workers over REST v2, and runpod:restUrl (or RUNPOD_REST_API_URL) ' +
  'is REST v1: set it to a /v2 URL (https://api.runpod.io/v2, the default), or set rollout: "ignore" to ' +
  "test without knowing the release";

/** Why an http probe cannot run on a REST v1 `restUrl`. */
export const PROBE_NEEDS_V2 =
  "an http probe reads the endpoint's requestUrls.base over REST v2, and runpod:restUrl (or RUNPOD_REST_API_URL) " +
  "is REST v1: set it to a /v2 URL (https://api.runpod.io/v2, the default)";

/**
 * The failure for an `expect.outputSchema` that is not a valid JSON Schema 2020-12 (ajv is loaded
 * only when there is a schema to check; an unknown schema in a preview is not judged).
 */
export function outputSchemaFailure(expectArg: unknown): CheckFailure | undefined {
  if (expectArg === null || typeof expectArg !== "object") return undefined;
  const schema = (expectArg as { outputSchema?: unknown }).outputSchema;
  if (schema === undefined || containsUnknown(schema)) return undefined;
  const reason = outputSchemaProblem(schema);
  return reason === undefined ? undefined : { property: "expect.outputSchema", reason };
}

/** `colour is not a JobRun argument (allowed: endpointId, ...)`. */
const notAJobRunArgument = (key: string, allowed: readonly string[]) =>
  `${formatPath([key])} is not a JobRun argument (allowed: ${allowed.join(", ")})`;

function checkFields(args: Record<string, unknown>): CheckFailure[] {
  const failures: CheckFailure[] = [];
  const tooLarge = payloadTooLarge(args);
  if (tooLarge !== undefined) failures.push(tooLarge);
  const result = JobRunArgsSchema.safeParse(args);
  // zod skips the rules between fields when a field fails, so a missing input is told here too.
  if (!result.success && args.input === undefined && args.http === undefined) {
    failures.push({ property: "input", reason: INPUT_REQUIRED });
  }
  if (result.success) return failures;
  for (const issue of result.error.issues) {
    if (unknownOnPath(args, issue.path)) continue;
    if (issue.code === "custom" && containsUnknown(args.mode)) continue;
    const unknownNames = unknownArgFailures(issue, JOB_RUN_ARG_NAMES, notAJobRunArgument);
    if (unknownNames) {
      failures.push(...unknownNames);
      continue;
    }
    const property =
      issue.code === "unrecognized_keys"
        ? formatPath([...issue.path, issue.keys[0] ?? ""])
        : formatPath(issue.path);
    if (property === "input" && failures.some((f) => f.property === "input")) continue;
    failures.push({ property, reason: describeIssue(issue) });
  }
  return failures;
}

/**
 * The failure for a job request larger than its mode accepts (`/run`: 10 MB, `/runsync`: 20 MB,
 * as JSON), so it fails in check rather than at submission. With `mode` unknown (preview) the
 * larger limit applies.
 */
function payloadTooLarge(args: Record<string, unknown>): CheckFailure | undefined {
  const { input, webhook, policy, s3Config } = args;
  if (input === null || typeof input !== "object") return undefined;
  const body = { input, webhook, policy, s3Config };
  if (containsUnknown(body)) return undefined;
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(body), "utf8");
  } catch {
    return undefined; // not JSON at all: the schema's failures say so
  }
  const sync = args.mode === "runsync" || containsUnknown(args.mode);
  const limit = sync ? RUNSYNC_PAYLOAD_LIMIT_BYTES : RUN_PAYLOAD_LIMIT_BYTES;
  if (bytes <= limit) return undefined;
  return {
    property: "input",
    reason:
      `input makes the job request ${bytes} bytes of JSON; mode "${sync ? "runsync" : "run"}" accepts at most ` +
      `${limit / MB} MB (${limit} bytes)${sync ? "" : `, mode "runsync" ${RUNSYNC_PAYLOAD_LIMIT_BYTES / MB} MB`}. ` +
      "Pass large inputs by reference (for example a URL, or through s3Config).",
  };
}
