/**
 * The pod rules the request schemas cannot see: which action each status allows (the document's
 * table), the lock, the fixed mount kind, and how a create body takes a template's settings.
 */
import type { Pod, PodAction, PodStatus } from "../../wire/pods";
import type { Template } from "../../wire/templates";
import type { PodCreateBody, PodUpdateBody } from "../requestBodies";
import { PodError } from "./errors";

/** Actions each status allows (the document's table). */
export const ACTIONS: Record<PodStatus, PodAction[]> = {
  PROVISIONING: ["stop", "terminate"],
  STARTING: ["stop", "terminate"],
  RUNNING: ["stop", "restart", "terminate"],
  EXITED: ["start", "terminate"],
  ERROR: ["start", "terminate"],
  TERMINATED: [],
};

/** The container settings of a pod: a change of one restarts a running pod. */
export const CONTAINER_FIELDS = ["image", "args", "disk", "ports", "env", "registry"] as const;

/** 409 when the pod's status does not allow `action`, or the pod is locked and `action` is not `start`. */
export function requireActionAllowed(pod: Pod & { status: PodStatus }, action: PodAction): void {
  if (pod.locked && action !== "start") {
    throw new PodError(
      409,
      `pod ${pod.id} is locked, so it cannot be ${action === "terminate" ? "terminated" : action === "stop" ? "stopped" : "restarted"}; unlock it first (PATCH /v2/pods/${pod.id} {"locked": false})`,
    );
  }
  if (!ACTIONS[pod.status].includes(action)) {
    throw new PodError(
      409,
      `action ${action} is not valid for pod ${pod.id} in status ${pod.status}; valid now: ${ACTIONS[pod.status].join(", ") || "none"}`,
    );
  }
}

/** 400 when a PATCH changes the mount kind or a network mount's volume (only `path` may change). */
export function requireSameMountKind(pod: Pod, mounts: NonNullable<PodUpdateBody["mounts"]>): void {
  const had = pod.mounts?.persistent ? "persistent" : pod.mounts?.network?.length ? "network" : undefined;
  if (mounts.network !== undefined && mounts.network.length === 0) {
    throw new PodError(400, "mounts.network: [] is not allowed (clearing mounts is not supported)");
  }
  const wants = mounts.persistent ? "persistent" : mounts.network ? "network" : undefined;
  if (wants && wants !== had) {
    throw new PodError(
      400,
      `mounts.${wants}: the mount kind is fixed at create (this pod has ${had ? `a ${had} mount` : "no mount"}); create a new pod to change it`,
    );
  }
  const oldVolume = pod.mounts?.network?.[0]?.volumeId;
  const newVolume = mounts.network?.[0]?.volumeId;
  if (newVolume !== undefined && newVolume !== oldVolume) {
    throw new PodError(
      400,
      `mounts.network[0].volumeId is immutable (the pod has ${oldVolume}); only path may change`,
    );
  }
}

/** The pod template `templateId` names: 404 when unknown, 422 when it is a serverless template. */
export function requirePodTemplate(template: Template | undefined, id: string): Template {
  if (!template) throw new PodError(404, `templateId: template ${id} not found`);
  if (template.serverless) {
    throw new PodError(
      422,
      `templateId: template ${id} is a serverless template; a pod needs a pod template`,
    );
  }
  return template;
}

/**
 * The create body with the template's settings under it: body fields win, `env` merges per
 * key (body wins), a CUDA field in the body replaces the template's constraint, and CPU pods
 * take no persistent mount from it.
 */
export function withTemplate(body: PodCreateBody, t: Template): PodCreateBody {
  const out: PodCreateBody = {
    ...body,
    image: body.image ?? t.image,
    args: body.args ?? t.args,
    disk: body.disk ?? t.disk,
    ports: body.ports ?? t.ports,
    registry: body.registry !== undefined ? body.registry : t.registry,
    env: { ...(t.env ?? {}), ...(body.env ?? {}) },
    startSsh: body.startSsh ?? t.startSsh,
    startJupyter: body.startJupyter ?? t.startJupyter,
  };
  if (!body.mounts && body.gpu && t.mounts?.persistent) {
    out.mounts = { persistent: { size: t.mounts.persistent.size, path: t.mounts.persistent.path } };
  }
  if (
    body.gpu &&
    body.gpu.allowedCudaVersions === undefined &&
    body.gpu.minCudaVersion === undefined &&
    t.allowedCudaVersions?.length
  ) {
    out.gpu = { ...body.gpu, allowedCudaVersions: [...t.allowedCudaVersions] };
  }
  return out;
}
