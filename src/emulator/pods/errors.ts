/** The pods' refusals: each carries the HTTP status the routes answer with. */

/** The message of a create (or start) that finds no capacity: what the service says. */
export const NO_CAPACITY_MESSAGE =
  "There are no longer any instances available with the requested specifications. Please refresh and try again.";

/** An error carrying the HTTP status the routes answer with. */
export class PodError extends Error {
  constructor(
    readonly status: 400 | 402 | 404 | 409 | 422,
    message: string,
  ) {
    super(message);
  }
}
