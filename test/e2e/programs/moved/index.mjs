// A registry credential that moves under a component. Config `layout`:
//   "flat" (default): at the top level;
//   "alias": under the component, with an alias to its old place;
//   "moved": under the component, without the alias.
// JavaScript (not TypeScript) so the repo's typecheck, which cannot resolve the installed package, skips it.
import * as pulumi from "@pulumi/pulumi";
import { ContainerRegistryAuth } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();
const layout = config.get("layout") ?? "flat";
const args = {
  name: config.require("registryAuthName"),
  username: "ci-bot",
  password: config.requireSecret("registryPassword"),
};

let registry;
if (layout === "flat") {
  registry = new ContainerRegistryAuth("registry", args);
} else {
  const group = new pulumi.ComponentResource("e2e:index:Registries", "registries");
  registry = new ContainerRegistryAuth("registry", args, {
    parent: group,
    ...(layout === "alias" ? { aliases: [{ parent: pulumi.rootStackResource }] } : {}),
  });
}

export const registryAuthId = registry.id;
