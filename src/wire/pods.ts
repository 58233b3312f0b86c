/**
 * REST v2 wire schemas of pods and the account's SSH keys, derived from `rest-v2.openapi.json`
 * (`/v2/pods...`, `/v2/account/ssh-keys`; `Pod`, `CreatePodRequest`, `UpdatePodRequest`,
 * `PodActionRequest`, `SshKeys`, `UpdateSshKeysRequest`).
 *
 * As in `serverless.ts`: request bodies are parsed strictly (an unknown field is an error naming
 * it) with the document's bounds, and the cross-field rules the document answers with 400 carry
 * {@link BAD_REQUEST_RULE} (exactly one of `gpu` or `cpu`; `mounts.persistent` not with `cpu`;
 * one mount kind; the CUDA set against the floor). Answers are parsed loosely: only `id`, `name`
 * and `status` are required. One source for the client and the emulator.
 */
import { z } from "zod";
import { containerConfigAnswerShape, containerConfigShape } from "./containerConfig";
import { badRequest, bool, cudaVersion, int, nonEmpty, str } from "./fields";
import { cudaExclusive } from "./serverless";
import { WorkerLogEventSchema, WorkerLogsQueryInputSchema } from "./workerLogs";

/** Lifecycle states of a pod (`PodStatus`). */
export const POD_STATUSES = ["PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED"] as const;
export type PodStatus = (typeof POD_STATUSES)[number];

/** State transitions of `POST /v2/pods/{id}/action` (`PodAction`). */
export const POD_ACTIONS = ["start", "stop", "restart", "terminate"] as const;
export type PodAction = (typeof POD_ACTIONS)[number];

/** Cloud tiers (`Cloud`). */
export const CLOUDS = ["SECURE", "COMMUNITY"] as const;
export type Cloud = (typeof CLOUDS)[number];

/** A port as the container exposes it: `8888/http` or `22/tcp`. */
export const POD_PORT = /^([1-9]\d{0,4})\/(http|tcp)$/;

/** `ports` of a pod or cluster create: each `<port>/http` or `<port>/tcp`. */
export const podPorts = z.array(
  str("ports").regex(POD_PORT, {
    error: 'ports entries must be "<port>/http" or "<port>/tcp", e.g. "8888/http"',
  }),
  { error: "ports must be an array of strings" },
);

/** Host-local persistent storage (GPU pods only), at least 10 GB. */
const PersistentMountInputSchema = z.strictObject({
  size: int("size").min(10, { error: "size must be at least 10 GB" }),
  path: nonEmpty("path"),
});

/** A network volume mounted at `path`. */
const NetworkMountInputSchema = z.strictObject({
  volumeId: nonEmpty("volumeId"),
  path: nonEmpty("path"),
});

/** `Mounts`: at most one of `persistent` or `network` (one entry). */
export const PodMountsInputSchema = z
  .strictObject({
    persistent: PersistentMountInputSchema.optional(),
    network: z
      .array(NetworkMountInputSchema, { error: "network must be an array of { volumeId, path }" })
      .max(1, { error: "network takes at most one volume" })
      .optional(),
  })
  .superRefine((mounts, ctx) => {
    if (mounts.persistent !== undefined && mounts.network !== undefined) {
      badRequest(ctx, "network", "persistent and network mounts are mutually exclusive; give one of them");
    }
  });
export type PodMountsInput = z.input<typeof PodMountsInputSchema>;

/** `CreateGpuConfig`: one GPU type, its count and the host's CUDA constraint. */
export const PodGpuInputSchema = z
  .strictObject({
    /** GPU type id (`GET /v2/catalog/gpus`), e.g. `NVIDIA GeForce RTX 4090`. */
    id: nonEmpty("id"),
    /** GPUs. @default 1 */
    count: int("count").min(1, { error: "count must be at least 1" }).optional(),
    /** Acceptable CUDA versions (`major.minor`); empty means any. */
    allowedCudaVersions: z.array(cudaVersion("allowedCudaVersions")).optional(),
    /** Lowest acceptable CUDA version (`major.minor`). */
    minCudaVersion: cudaVersion("minCudaVersion").optional(),
  })
  .superRefine(cudaExclusive);

/** `CreateCpuConfig`: a CPU flavour and its vCPUs (a power of two, at least 2). */
export const PodCpuInputSchema = z.strictObject({
  id: nonEmpty("id"),
  vcpuCount: int("vcpuCount")
    .min(2, { error: "vcpuCount must be at least 2" })
    .refine((n) => (n & (n - 1)) === 0, { error: "vcpuCount must be a power of two" }),
});

/** Body of `POST /v2/pods` (`CreatePodRequest`). */
export const PodCreateInputSchema = z
  .strictObject({
    ...containerConfigShape,
    ports: podPorts.optional(),
    name: nonEmpty("name"),
    /** @default "SECURE" */
    cloud: z.enum(CLOUDS, { error: "cloud must be SECURE or COMMUNITY" }).optional(),
    cpu: PodCpuInputSchema.optional(),
    /** Preferred data centres; empty lets the scheduler choose. */
    dataCenterIds: z
      .array(str("dataCenterIds"), { error: "dataCenterIds must be an array of strings" })
      .optional(),
    /** @default false */
    globalNetworking: bool("globalNetworking").optional(),
    gpu: PodGpuInputSchema.optional(),
    mounts: PodMountsInputSchema.optional(),
    /** Create-only: inject a generated `JUPYTER_PASSWORD`. Never read back. @default false */
    startJupyter: bool("startJupyter").optional(),
    /** Create-only: inject the account's SSH keys as `PUBLIC_KEY`. Never read back. @default false */
    startSsh: bool("startSsh").optional(),
    templateId: nonEmpty("templateId").optional(),
  })
  .superRefine((body, ctx) => {
    if (body.gpu !== undefined && body.cpu !== undefined) {
      badRequest(ctx, "cpu", "cpu cannot be combined with gpu; a pod runs on exactly one of them");
    } else if (body.gpu === undefined && body.cpu === undefined) {
      badRequest(ctx, "gpu", "gpu is required unless cpu is given: a pod runs on exactly one of gpu or cpu");
    }
    if (body.cpu !== undefined && body.mounts?.persistent !== undefined) {
      badRequest(
        ctx,
        ["mounts", "persistent"],
        "mounts.persistent is not allowed on a CPU pod; use a network volume (mounts.network)",
      );
    }
    if (body.image === undefined && body.templateId === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["image"],
        message: "image is required unless templateId is given",
      });
    }
  });
export type PodCreateInput = z.input<typeof PodCreateInputSchema>;

/** Body of `PATCH /v2/pods/{id}` (`UpdatePodRequest`): only the fields given change; `env` is replaced whole. */
export const PodUpdateInputSchema = z
  .strictObject({
    ...containerConfigShape,
    ports: podPorts.optional(),
    globalNetworking: bool("globalNetworking").optional(),
    locked: bool("locked").optional(),
    mounts: PodMountsInputSchema.optional(),
    name: nonEmpty("name").optional(),
    templateId: str("templateId").optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { error: "give at least one field to update" });
export type PodUpdateInput = z.input<typeof PodUpdateInputSchema>;

/** Body of `POST /v2/pods/{id}/action` (`PodActionRequest`). */
export const PodActionInputSchema = z.strictObject({
  action: z.enum(POD_ACTIONS, { error: "action must be start, stop, restart or terminate" }),
});

/** Query of the pod-log stream: the worker-log query (`tail`, `since`, `source`). */
export const PodLogsQueryInputSchema = WorkerLogsQueryInputSchema;
/** One pod log event: `{ source, line, ts }`. */
export const PodLogEventSchema = WorkerLogEventSchema;
export type PodLogEvent = z.infer<typeof PodLogEventSchema>;

/** One authorized_keys line: `<type> <base64-key> [comment]` (the document's pattern). */
export const SSH_PUBLIC_KEY = /^(ssh|ecdsa|sk)-[^\s]+ [^\s]+([ \t][^\n\r]*)?$/;

/** Body of `PUT /v2/account/ssh-keys` (`UpdateSshKeysRequest`): the whole set. */
export const SshKeysInputSchema = z.strictObject({
  keys: z.array(
    str("keys")
      .regex(SSH_PUBLIC_KEY, {
        error:
          'keys entries must be authorized_keys lines "<type> <base64-key> [comment]", e.g. "ssh-ed25519 AAAA... me@host"',
      })
      // The document's pattern admits a NUL in the comment (`[^\n\r]*`), but an entry is a text
      // line that sshd reads up to a NUL and a text store refuses: taken as refused (422), the
      // document being silent on it, so the emulator never stores one and the client never sends one.
      .refine((line) => !line.includes("\u0000"), { error: "keys entries must not hold a NUL character" }),
    { error: "keys must be an array of strings" },
  ),
});

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

/** `PodSshEndpoint`. */
export const PodSshEndpointSchema = z.looseObject({
  /** Host name or IP address. */
  host: z.string(),
  /** TCP port. */
  port: z.number().int(),
  /** User to log in as. */
  username: z.string(),
  /** The whole `ssh` command, when the service gives one. */
  command: z.string().optional(),
});
export type PodSshEndpoint = z.infer<typeof PodSshEndpointSchema>;

/** `PodRuntimePort`: a live port mapping. */
export const PodRuntimePortSchema = z.looseObject({
  /** The port inside the pod. */
  private: z.number().int().optional(),
  /** The port on `ip`; null while not mapped. */
  public: z.number().int().nullable().optional(),
  /** `http` or `tcp`. */
  type: z.string().optional(),
  /** The address it is reachable on; null while not mapped. */
  ip: z.string().nullable().optional(),
});

/** A pod as `GET /v2/pods/{id}` answers (`Pod`). */
export const PodSchema = z.looseObject({
  /** The pod's id. */
  id: z.string().min(1),
  /** The pod's name. */
  name: z.string(),
  /** `PROVISIONING`, `STARTING`, `RUNNING`, `EXITED`, `ERROR` or `TERMINATED`. */
  status: z.string().min(1),
  /** Actions valid in the current status. */
  actions: z.array(z.string()).optional(),
  ...containerConfigAnswerShape,
  /** What is mounted in the pod: its persistent volume and network volumes. */
  mounts: z
    .looseObject({
      /** The pod's own volume, kept across restarts. */
      persistent: z
        .looseObject({
          /** Size, GB. */
          size: z.number().int(),
          /** Where it is mounted. */
          path: z.string(),
        })
        .optional(),
      /** Network volumes mounted in the pod. */
      network: z
        .array(
          z.looseObject({
            /** The network volume's id. */
            volumeId: z.string(),
            /** Where it is mounted. */
            path: z.string(),
          }),
        )
        .optional(),
    })
    .optional(),
  /** The GPU type the pod landed on and its count (GPU pods). */
  gpu: z
    .looseObject({
      /** GPU type id, e.g. `NVIDIA GeForce RTX 4090`. */
      id: z.string(),
      /** GPUs on the pod. */
      count: z.number().int().optional(),
    })
    .optional(),
  /** The CPU flavour and size (CPU pods). */
  cpu: z
    .looseObject({
      /** CPU flavour id, e.g. `cpu5c`. */
      id: z.string(),
      /** vCPUs. */
      vcpuCount: z.number().int().optional(),
      /** Memory, GB. */
      memory: z.number().optional(),
    })
    .optional(),
  /** `SECURE` or `COMMUNITY`. */
  cloud: z.string().optional(),
  /** Data center the pod runs in, e.g. `EU-RO-1`; null before it is placed. */
  dataCenterId: z.string().nullable().optional(),
  /** CUDA version of its host; null before it is placed. */
  cudaVersion: z.string().nullable().optional(),
  /** SSH endpoints while it runs with SSH started. */
  ssh: z
    .looseObject({
      /** Through RunPod's SSH proxy. */
      proxy: PodSshEndpointSchema.nullable().optional(),
      /** Straight to the pod's public IP and mapped port 22 (absent when it has none). */
      direct: PodSshEndpointSchema.nullable().optional(),
    })
    .optional(),
  /** Id of the template it was made from; null when none. */
  template: z.string().nullable().optional(),
  /** Cluster membership (`PodCluster`); absent on a standalone pod. */
  cluster: z
    .looseObject({
      /** Id of the cluster this pod belongs to. */
      id: z.string(),
      /** Node rank (`NODE_RANK`), null until assigned; 0 is the cluster's primary. */
      rank: z.number().int().nullable().optional(),
      /** `SLURM_CONTROLLER`, `SLURM_COMPUTE`, `RAY_HEAD` or `RAY_WORKER`; absent for TRAINING and APPLICATION. */
      role: z.string().optional(),
      /** Address on the cluster's overlay network. */
      ip: z.string().optional(),
    })
    .optional(),
  /** USD per hour now (0 when EXITED or TERMINATED). */
  cost: z.number().optional(),
  /** True while the pod is locked against stop and terminate. */
  locked: z.boolean().optional(),
  /** Global networking: whether it is on, the pod's private address and DNS name. */
  globalNetworking: z
    .looseObject({
      /** True when the pod has global networking. */
      enabled: z.boolean(),
      /** The pod's address on the global network. */
      ip: z.string().optional(),
      /** The pod's name on the global network. */
      internalDns: z.string().optional(),
    })
    .optional(),
  /** Live port mappings and uptime while it runs; null otherwise. */
  runtime: z
    .looseObject({
      /** Seconds since it started. */
      uptime: z.number().optional(),
      /** Each exposed port. */
      ports: z.array(PodRuntimePortSchema).optional(),
    })
    .nullable()
    .optional(),
  /** When it was created (RFC 3339). */
  createdAt: z.string().optional(),
  /** When it last started (RFC 3339); null when it has not. */
  startedAt: z.string().nullable().optional(),
});
export type Pod = z.infer<typeof PodSchema>;

/** `GET /v2/pods`: `{ pods: [...] }`. */
export const PodListSchema = z.looseObject({ pods: z.array(PodSchema) });

/** `GET`/`PUT /v2/account/ssh-keys` answer (`SshKeys`). */
export const SshKeysSchema = z.looseObject({ keys: z.array(z.string()) });
export type SshKeys = z.infer<typeof SshKeysSchema>;
