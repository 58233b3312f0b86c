/**
 * A ServerlessEndpoint as the change-plan and diff tests meet it: the outputs the emulator reads
 * back for a fresh GPU endpoint at version 1, and the program that made it. Tests spread these and
 * change the fields their case is about.
 */

/** Outputs as the emulator reads a fresh GPU endpoint back (version 1). */
export const ENDPOINT_OUTPUTS = {
  name: "api",
  type: "QUEUE",
  image: "acme/api:1",
  args: "",
  disk: 20,
  ports: [],
  env: { MODEL: "small" },
  registry: null,
  gpu: { pools: ["ADA_24"], count: 1, allowedCudaVersions: [], minCudaVersion: null },
  workers: { min: 0, max: 2, idleTimeout: 10 },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  dataCenterIds: [],
  networkVolumes: [],
  timeout: 300_000,
  flashboot: "OFF",
  version: 1,
};

/** The program those outputs were made from: what it gives, the service's defaults left out. */
export const ENDPOINT_PROGRAM = {
  name: "api",
  type: "QUEUE" as const,
  image: "acme/api:1",
  env: { MODEL: "small" },
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY" as const, queueDelay: 4 },
  workers: { max: 2 },
};
