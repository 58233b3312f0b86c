// Finds a network volume by name (names need not be unique, so the data centre narrows it down)
// and exports its id and size, e.g. for an endpoint or pod template defined elsewhere.
import * as pulumi from "@pulumi/pulumi";
import { getNetworkVolumeOutput } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();

const volume = getNetworkVolumeOutput({
  name: config.get("volumeName") ?? "models",
  dataCenterId: config.get("dataCenterId") ?? "EU-RO-1",
});

export const volumeId = volume.id;
export const volumeSizeGb = volume.size;
export const volumeDataCenter = volume.dataCenterId;
