/**
 * What the plugin serves: rows of the package's one resource table (`../provider/resources.ts`)
 * under the plugin's type tokens, each dispatching to the operations module the dynamic provider
 * uses. The operations do not know which front end calls them; what differs (secret wrapping,
 * `__provider`, the config's names) is adapted in `./server.ts`.
 *
 * Preview: ContainerRegistryAuth, NetworkVolume, Template, SshKey and Pod. Serving another resource adds its class name to
 * {@link SERVED_CLASSES} once its arguments map to the package schema (`./schema.ts`) and its
 * sequences are tested over gRPC (test/plugin/).
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
];

/**
 * The resources whose operations read their URN from the input `__urn` (an SshKey's owner mark, the
 * budget's sum): in a program their class registers it (`urn: true` in its spec,
 * `../provider/common/resource.ts`); here Check adds it from the request's URN. The same list as the
 * classes' specs (test/plugin/urnInput.test.ts).
 */
export const URN_INPUT_CLASSES: readonly ResourceName[] = ["SshKey", "Pod", "ServerlessEndpoint"];

/** The input holding a resource's URN. */
export const URN_INPUT = "__urn";

/** A served resource: its type token, its table row and its operations. */
export interface ServedResource {
  /** `runpod-native:index:<Class>`. */
  token: string;
  row: ResourceRow;
  /** Check adds the request's URN as the input {@link URN_INPUT}. */
  urnInput: boolean;
  /** The operations module's `operations` (loaded on first call). */
  operations(): ResourceOperations;
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
      operations: () => require(modulePath).operations,
    };
  });
}
