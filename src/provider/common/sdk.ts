/**
 * Pulumi's SDK, loaded on first use. The lookups need it only for their `<fn>Output` forms; the
 * native plugin's `Invoke` calls the lookups themselves, and loading the SDK's root costs a
 * plugin most of a second (a program has it loaded already).
 */
export const pulumiSdk = (): typeof import("@pulumi/pulumi") => require("@pulumi/pulumi");
