#!/usr/bin/env node
/**
 * `pulumi-resource-runpod-native`: the plugin as the engine starts it. The engine runs it with its
 * own address as the first argument and reads one line from stdout, the port the plugin listens
 * on (`newPlugin` in pulumi/pulumi pkg/resource/plugin/plugin.go: "we expect it to write a single
 * line to STDOUT: the port"); it then dials 127.0.0.1:<port>. Anything else the plugin prints goes
 * to stderr, which the engine shows as the plugin's output.
 */
import { startPlugin } from "./server";

async function main(args: string[]): Promise<void> {
  const engineAddress = args.find((a) => !a.startsWith("-"));
  const plugin = await startPlugin({ engineAddress });
  // The port as a plain line; the engine parses it with strconv.Atoi after trimming.
  process.stdout.write(`${plugin.port}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(
    `pulumi-resource-runpod-native: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
