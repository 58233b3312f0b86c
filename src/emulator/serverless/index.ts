/** The emulator's REST v2 serverless endpoints and templates (see `store.ts`). */
export {
  ServerlessConflictError,
  ServerlessNotFoundError,
  ServerlessUnsupportedError,
  ServerlessValidationError,
} from "./errors";
export type { StoredEndpoint, Template as StoredTemplate } from "./records";
export { diffValues } from "./releases";
export { DEFAULT_HEALTH_PATH, HEALTH_CHECK_PATH_ENV, healthPath } from "./requestUrls";
export { ServerlessStore } from "./store";
