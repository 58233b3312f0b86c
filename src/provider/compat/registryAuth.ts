/**
 * The operations module of version 0.1.0, kept for the states it wrote. Do not remove or rename.
 *
 * 0.1.0 stored in every ContainerRegistryAuth's state a `__provider` text that does
 * `require("pulumi-runpod-dynamic/dist/provider/registryAuth.js")` and calls the functions below
 * by name. That text runs again, against whatever version is installed, on every `pulumi refresh`
 * and `pulumi destroy`, and for as long as a resource stays unchanged, so this path must keep
 * exporting them with their 0.1.0 arguments (test/provider/oldState.test.ts replays a 0.1.0 state).
 * The file lives in `compat/`; package.json `exports` maps the old path here by an exact key,
 * which wins over the `./dist/*` pattern. The code lives in `../containerRegistryAuth/operations.ts`, whose
 * header states the contract; the resource class is in `../containerRegistryAuth/resource.ts`.
 */
export {
  checkRegistryAuth,
  createRegistryAuth,
  deleteRegistryAuth,
  diffRegistryAuth,
  readRegistryAuth,
  settingsFromConfigure,
  updateRegistryAuth,
} from "../containerRegistryAuth/operations";
