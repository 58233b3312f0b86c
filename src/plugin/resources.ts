/**
 * What the plugin serves: rows of the package's one resource table (`../provider/resources.ts`)
 * under the plugin's type tokens, each dispatching to the operations module the dynamic provider
 * uses. The operations do not know which front end calls them; what differs (secret wrapping,
 * `__provider`, the config's names) is adapted in `./server.ts`.
 *
 * The resources served are {@link SERVED_CLASSES}: every row of the table. What a resource's class does to
 * its arguments in a program beyond its row (a secret only in some cases, a value left out) is
 * said once here, in {@link CLASS_RULES}, and done by Check and the answers that carry outputs.
 */
import * as path from "node:path";
import type { ResourceOperations } from "../provider/common/dynamicProvider";
import { RESOURCES, type ResourceName, type ResourceRow } from "../provider/resources";
import { PACKAGE_NAME } from "./config";

/** The resources served now, by class name. */
export const SERVED_CLASSES: readonly ResourceName[] = [
  "ContainerRegistryAuth",
  "NetworkVolume",
  "Template",
  "SshKey",
  "Pod",
  "ServerlessEndpoint",
  "JobRun",
  "EcrDelegation",
  "Cluster",
];

/**
 * The resources whose operations read their URN from the input `__urn` (an SshKey's owner mark, the
 * budget's sum): in a program their class registers it (`urn: true` in its spec,
 * `../provider/common/resource.ts`); here Check adds it from the request's URN. The same list as the
 * classes' specs (test/plugin/urnInput.test.ts).
 */
export const URN_INPUT_CLASSES: readonly ResourceName[] = ["SshKey", "Pod", "ServerlessEndpoint", "Cluster"];

/** The input holding a resource's URN. */
export const URN_INPUT = "__urn";

type Props = Record<string, unknown>;

/**
 * What a resource's class does in a TypeScript program besides what its row says (the row's
 * `secretInputs` are always secret, `__urn` is {@link URN_INPUT_CLASSES}), for the plugin to do the
 * same for a program in any language. Each rule reads the plain inputs (secrets unwrapped); a value
 * still unknown in a preview is judged at the up's Check, when it is known (as the class judges it
 * once its Output resolves).
 */
export interface ClassRules {
  /** The arguments as the class registers them (Check's input to the operations). */
  registered?(given: Props): Props;
  /** Top-level keys to keep secret in the inputs and the outputs, beyond the row's. */
  secretKeys?(inputs: Props): string[];
}

/**
 * True when `value` holds an http probe's `headers` (an `http` argument, or a `smokeTest` holding
 * `http`): header values are credentials. The rule of `secretWhenHeaders` in the classes
 * (`../provider/smokeTestJob/jobInputs.ts`), on plain values.
 */
export function holdsHeaders(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const plain = value as { headers?: unknown; http?: { headers?: unknown } | null };
  const headers = plain.headers ?? plain.http?.headers;
  return headers !== undefined && headers !== null;
}

/** The class rules, by class name (`../provider/<folder>/resource.ts` does the same in a program). */
export const CLASS_RULES: Partial<Record<ResourceName, ClassRules>> = {
  // ServerlessEndpoint: `smokeTest` is a secret when it has `http.headers`.
  ServerlessEndpoint: {
    secretKeys: (inputs) => (holdsHeaders(inputs.smokeTest) ? ["smokeTest"] : []),
  },
  // JobRun: `http` is a secret when it has `headers`; with `secretOutput: true`, the worker's
  // `output` and `stream` are secret outputs (`additionalSecretOutputs`); `secretOutput` is
  // registered only when true.
  JobRun: {
    registered: ({ secretOutput, ...rest }) => (secretOutput === true ? { ...rest, secretOutput } : rest),
    secretKeys: (inputs) => [
      ...(holdsHeaders(inputs.http) ? ["http"] : []),
      ...(inputs.secretOutput === true ? ["output", "stream"] : []),
    ],
  },
};

/** A served resource: its type token, its table row and its operations. */
export interface ServedResource {
  /** `runpod-native:index:<Class>`. */
  token: string;
  row: ResourceRow;
  /** Check adds the request's URN as the input {@link URN_INPUT}. */
  urnInput: boolean;
  /** What its class does besides its row. @default none */
  rules?: ClassRules;
  /** The operations module's `operations` (loaded on first call). */
  operations(): ResourceOperations;
}

/**
 * The top-level keys `resource` keeps secret, in inputs and outputs alike: its row's secret
 * inputs and what its class rules add for these plain `inputs`.
 */
export function secretKeysOf(resource: ServedResource, inputs: Props): string[] {
  return [...resource.row.secretInputs, ...(resource.rules?.secretKeys?.(inputs) ?? [])];
}

/** The type token of a class: `runpod-native:index:<Class>`. */
export const tokenOf = (className: string) => `${PACKAGE_NAME}:index:${className}`;

/** The served resources, from the table. */
export function servedResources(classes: readonly ResourceName[] = SERVED_CLASSES): ServedResource[] {
  return classes.map((className) => {
    const row = RESOURCES[className];
    // Beside this file in dist/ (or src/ under a TypeScript loader): ../provider/<folder>/operations.
    const modulePath = path.join(__dirname, "..", "provider", row.folder, "operations");
    return {
      token: tokenOf(className),
      row,
      urnInput: URN_INPUT_CLASSES.includes(className),
      ...(CLASS_RULES[className] === undefined ? {} : { rules: CLASS_RULES[className] }),
      operations: () => require(modulePath).operations,
    };
  });
}
