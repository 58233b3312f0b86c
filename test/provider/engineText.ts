/**
 * The text `pulumi up` prints for a failed provider call, computed the engine's way from what the
 * dynamic-provider host sent over gRPC (a {@link HostError}):
 *
 * - A partial failure (the host packed `ErrorResourceInitFailed` into the status details, so the
 *   error has an `id`): `parseError` (pkg/resource/plugin/provider_plugin.go) turns it into
 *   `&InitError{Reasons: initErr.Reasons}`; `InitError.Error()` appends each reason to a
 *   hashicorp/go-multierror and prints its `ListFormatFunc`, or the literal "resource init
 *   failed" when there is none. The step records `InitErrors` only from these reasons
 *   (pkg/resource/deploy/step.go, CreateStep.Apply / UpdateStep.Apply).
 * - Any other error: `resourceStateAndError` returns `rpcerror.Convert(err)`, whose `Error()` is
 *   the gRPC status message; the host sets it to the thrown error's `message`
 *   (sdk/nodejs/cmd/dynamic-provider/index.ts, `grpcResponseFromError`).
 */
import type { HostError } from "../support/providerHost.mts";

/** go-multierror's `ListFormatFunc`. */
export function multierrorText(reasons: readonly string[]): string {
  if (reasons.length === 1) return `1 error occurred:\n\t* ${reasons[0]}\n\n`;
  return `${reasons.length} errors occurred:\n\t${reasons.map((r) => `* ${r}`).join("\n\t")}\n\n`;
}

/** What the engine prints for this failed call. */
export function engineText(error: HostError): string {
  if (error.id !== undefined && error.id !== "") {
    const reasons = error.reasons ?? [];
    return reasons.length === 0 ? "resource init failed" : multierrorText(reasons);
  }
  return error.message;
}
