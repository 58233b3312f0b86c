/**
 * Where states written by version 0.1.0 find the JobRun operations: their stored `__provider`
 * does `require("pulumi-runpod-dynamic/dist/provider/jobRun/lifecycle.js")` and calls these names
 * (see `../../jobRun/operations.ts` for the contract). Keep this module, and these exports, as long
 * as such states may exist. package.json `exports` maps the old path here by an exact key, which
 * wins over the `./dist/*` pattern.
 */
export {
  checkJobRunArgs,
  contextFromSettings,
  createJobRun,
  deleteJobRun,
  diffJobRun,
  readJobRun,
  resolveSettings,
  updateJobRun,
} from "../../jobRun/operations";
