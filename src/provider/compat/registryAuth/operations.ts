/**
 * Where states written before ContainerRegistryAuth's folder was named for its class find its
 * operations. Do not remove or rename.
 *
 * Their stored `__provider` does `require("pulumi-runpod-dynamic/dist/provider/registryAuth/operations.js")`:
 * texts from before the shared provider class call the named functions below, texts since call
 * `operations` (`../../common/dynamicProvider.ts`). They run again, against whatever version is
 * installed, on every `pulumi refresh` and `pulumi destroy`, and for as long as a resource stays
 * unchanged (test/provider/mainState.test.ts and oldState.test.ts replay such states). package.json
 * `exports` maps the old path here by an exact key, which wins over the `./dist/*` pattern. The
 * code and its contract are in `../../containerRegistryAuth/operations.ts`.
 */

export type { RegistryAuthInputs, RegistryAuthOutputs } from "../../containerRegistryAuth/operations";
export {
  checkRegistryAuth,
  createRegistryAuth,
  createWithClient,
  deleteRegistryAuth,
  diffRegistryAuth,
  operations,
  readRegistryAuth,
  settingsFromConfigure,
  updateRegistryAuth,
} from "../../containerRegistryAuth/operations";
