// A deploy-time smoke test of a RunPod serverless endpoint: during `pulumi up` it sends one job,
// waits for it to end, and fails the deploy when the answer is not what the worker should give.
//
// It runs on the first `up` and again on every redeploy of the endpoint (a new image, env, GPU
// type...), whichever tool made it: the trigger is the endpoint's own version, read from RunPod.
//   pulumi config set endpointId abc123xyz
//   pulumi up
import * as pulumi from "@pulumi/pulumi";
import { getServerlessEndpointOutput, JobRun } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();
const endpointId = config.get("endpointId") ?? "echo";

// The endpoint as RunPod has it now (REST v2). Its `version` goes up by one with every release,
// so `triggers: [ep.version]` re-runs the smoke test after each redeploy and only then.
const ep = getServerlessEndpointOutput({ id: endpointId });

// What a language model's answer looks like: a non-empty `text` and a `tokens` count. A schema
// checks the shape, where `expect.output` would pin exact words that change from run to run.
const answerSchema = {
  type: "object",
  required: ["text", "tokens"],
  properties: {
    text: { type: "string", minLength: 1 },
    tokens: { type: "integer", minimum: 1 },
  },
};

// The defaults fit the local emulator's built-in worker, which answers with the input's `output`.
// For your worker, set its input and, if its answer has another shape, the schema, e.g.:
//   pulumi config set --path 'smokeInput.prompt' 'Say OK'
//   pulumi config set --path 'expectOutput.text' OK    # optional: exact values as well
const expectOutput = config.getObject<unknown>("expectOutput");

const smoke = new JobRun("smoke", {
  endpointId,
  input: config.getObject<Record<string, unknown>>("smokeInput") ?? {
    prompt: "Say OK",
    max_tokens: 8,
    output: { text: "OK", tokens: 2 }, // only the emulator reads this
  },
  expect: {
    status: "COMPLETED",
    outputSchema: config.getObject<Record<string, unknown>>("outputSchema") ?? answerSchema,
    ...(expectOutput === undefined ? {} : { output: expectOutput }),
  },
  // Test the release that was just deployed, not an old worker still serving during the rollout.
  // Before submitting, wait until every worker runs the endpoint's current version (a read of
  // its workers a second while a rollout is under way; one read when none is). After the job,
  // check that the worker that ran it was on the current version (one more read), and submit once
  // more if a release rolled out meanwhile. The default on REST v2; REST v1 needs "ignore".
  rollout: "wait",
  // The whole run, rollout wait included, ends within 5 minutes or fails the deploy.
  timeoutMs: 5 * 60 * 1000,
  triggers: [ep.version],
});

export const jobId = smoke.jobId;
export const jobStatus = smoke.status;
export const jobOutput = smoke.output;
export const jobTimeline = smoke.timeline; // e.g. ROLLOUT_WAIT, ROLLED_OUT, IN_QUEUE, COMPLETED
export const startedAt = smoke.startedAt;
export const workerId = smoke.workerId; // the worker that ran the job
export const endpointVersion = smoke.endpointVersion; // the release the job was verified to run on
export const deployedVersion = ep.version; // the endpoint's version when the program ran
