/**
 * `npm run gen:schema`: writes `docs/reference/runpod-native.schema.json`, the package schema the
 * native plugin answers `GetSchema` with, from the build (`dist/plugin/`; the npm script builds first).
 * Committed, so `pulumi package add docs/reference/runpod-native.schema.json` works without running the
 * plugin, the registry can read it, and a change of the schema shows in review;
 * `test/plugin/schemaFile.test.ts` fails when the committed file differs from what the plugin answers.
 * `--check` writes nothing and exits 1 when the file is stale.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Where the schema is written, relative to the repository. */
export const PLUGIN_SCHEMA_FILE = "docs/reference/runpod-native.schema.json";

const require = createRequire(import.meta.url);
const { packageSchema } = require("../dist/plugin/schema.js") as typeof import("../src/plugin/schema.ts");
const { servedResources } =
  require("../dist/plugin/resources.js") as typeof import("../src/plugin/resources.ts");

const text = `${JSON.stringify(JSON.parse(await packageSchema(servedResources())), null, 2)}\n`;
const file = path.join(REPO_DIR, PLUGIN_SCHEMA_FILE);
const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
if (current !== text) {
  if (process.argv.includes("--check")) {
    process.stderr.write(`${PLUGIN_SCHEMA_FILE} is stale: run npm run gen:schema and commit it\n`);
    process.exit(1);
  }
  writeFileSync(file, text);
  process.stdout.write(`wrote ${PLUGIN_SCHEMA_FILE}\n`);
}
