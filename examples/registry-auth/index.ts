// Registry credentials from stack config secrets:
//   pulumi config set registryUsername my-bot
//   pulumi config set --secret registryPassword ghp_...
//   pulumi config set --secret runpod:apiKey rpa_...
import * as pulumi from "@pulumi/pulumi";
import { ContainerRegistryAuth } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();

const registry = new ContainerRegistryAuth("ghcr", {
  name: config.get("registryAuthName") ?? "ghcr-deploy-bot",
  username: config.require("registryUsername"),
  password: config.requireSecret("registryPassword"),
});

export const registryAuthId = registry.id;
export const registryAuthName = registry.name;
