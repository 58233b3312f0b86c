// Declares echo fixture resources driven by stack config, like a user's program would.
import * as pulumi from "@pulumi/pulumi";
import fixture from "runpod-echo-fixture";

const config = new pulumi.Config("echo");
const { Echo } = fixture;

const names = (config.get("names") ?? "a").split(",").filter((n) => n !== "");
const resources = names.map(
  (name) =>
    new Echo(name, {
      value: config.get("value") ?? "v1",
      immutable: config.get("immutable") ?? "i1",
      secretInput: config.getSecret("secret"),
      failWhileExists: config.get("failWhileExists"),
      failReasons: config.getObject("failReasons"),
      deleteBeforeReplace: config.getBoolean("deleteBeforeReplace") ?? false,
    }),
);

export const ids = resources.map((r) => r.id);
export const values = resources.map((r) => r.value);
export const token = resources[0]?.token;
export const secretEcho = resources[0]?.secretInput;
