"""A guarded serverless release and a dev pod, from Python, through the runpod-native plugin.

The SDK `pulumi_runpod_native` is generated into `sdks/` by `pulumi package add` (see
docs/languages.md); `pulumi install` installs it with requirements.txt. Set once:

    pulumi config set --secret runpod-native:apiKey <your RunPod API key>
    pulumi config set --secret ghcrToken <a token that reads your private image>
    pulumi config set sshPublicKey "$(cat ~/.ssh/id_ed25519.pub)"

The stack budget, runpod-native:maxHourlyUsd (20 USD an hour, in Pulumi.yaml), is judged in the
preview: a change that takes the sum of the endpoint's and the pod's ceilings over it fails before
anything is created.
"""

import pulumi
import pulumi_runpod_native as runpod

config = pulumi.Config()

# The serverless GPU pools with 48 GB or more that have stock now: the plugin's getGpuTypes function.
catalog = runpod.get_gpu_types(serverless=True, availability=True)
big_pools = sorted({t.pool for t in catalog.gpu_types if t.memory >= 48 and t.availability != "NONE"})

# The private image's credential. The password is a secret in the state and never printed.
ghcr = runpod.ContainerRegistryAuth(
    "ghcr",
    name="ghcr-python-serverless",
    username=config.get("ghcrUser") or "my-org",
    password=config.require_secret("ghcrToken"),
)

# A queue endpoint whose every release is smoke-tested: `pulumi up` returns once no worker runs the
# old version, and a release whose job fails is rolled back to the previous container settings.
endpoint = runpod.ServerlessEndpoint(
    "api",
    name="python-serverless-api",
    type="QUEUE",
    image=config.get("image") or "ghcr.io/my-org/worker:1.0.0",
    registry=ghcr.id,
    env={"MODEL": "small"},
    gpu=runpod.ServerlessEndpointGpuArgs(pools=big_pools or ["ADA_48_PRO"], count=1),
    workers=runpod.ServerlessEndpointWorkersArgs(min=0, max=2, idle_timeout=10),
    scaling=runpod.ServerlessEndpointScalingQueueDelayArgs(type="QUEUE_DELAY", queue_delay=4),
    smoke_test=runpod.ServerlessEndpointSmokeTestArgs(
        input={"prompt": "ping"},
        timeout_ms=10 * 60_000,
        expect=runpod.ServerlessEndpointSmokeTestExpectArgs(status="COMPLETED", output={"ok": True}),
        on_failure="rollback",
    ),
    max_hourly_usd=5,
)

# The key the pod is reached with, added to the account's keys as this resource's own entry.
key = runpod.SshKey("me", public_key=config.require("sshPublicKey"))

# A dev pod on the first GPU type that has capacity, usable over SSH when `pulumi up` returns.
pod = runpod.Pod(
    "dev",
    name="python-dev",
    image="runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
    gpu=runpod.PodGpuArgs(id="NVIDIA H100 80GB HBM3", count=1),
    fallback_gpu_ids=["NVIDIA A100 80GB PCIe", "NVIDIA L40S"],
    ports=["22/tcp"],
    start_ssh=True,
    wait_for="ssh",
    wait_timeout_ms=10 * 60_000,
    max_hourly_usd=4,
    opts=pulumi.ResourceOptions(depends_on=[key]),
)

pulumi.export("endpointId", endpoint.id)
pulumi.export("endpointCeilingUsd", endpoint.hourly_cost.apply(lambda c: c["ceilingUsd"] if c else None))
pulumi.export("podId", pod.id)
pulumi.export("ssh", pod.ssh)
