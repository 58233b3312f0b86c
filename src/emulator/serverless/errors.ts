/** The serverless store's refusals; the routes answer each with its status. */

/** A request the store refuses for a reason the schema cannot see (the server answers 400). */
export class ServerlessConflictError extends Error {}
/** A request for something the emulator does not do (the server answers 501). */
export class ServerlessUnsupportedError extends Error {}
/** A request naming something that does not exist (the server answers 404). */
export class ServerlessNotFoundError extends Error {}
/** A request that is well formed but fails the document's validation (the server answers 422). */
export class ServerlessValidationError extends Error {}
