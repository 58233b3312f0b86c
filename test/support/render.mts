/**
 * Renders a deploy step the way `pulumi up` / `pulumi destroy` print their summary, for runs made
 * without the Pulumi CLI (the deploy harness): the resource table with its op symbols
 * (`+` create, `~` update, `+-` replace, `-` delete), the stack outputs (changed ones marked
 * `~ old => new`), the resource counts, diagnostics for failed steps, and the duration.
 *
 * Only node: builtins; plain text (no colours), so it reads the same in a terminal and in a log.
 */

/** The engine's unknown value on the wire (`UnknownStringValue`, sdk/go/common/resource/plugin/rpc.go). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** What happened to one resource in a step (the deploy harness's ops). */
export type StepOp = "create" | "update" | "replace" | "same" | "delete" | "read" | "failed";

/** One step to render. */
export interface StepView {
  /**
   * `up` prints "Updating", `destroy` "Destroying", `refresh` "Refreshing", `preview`
   * "Previewing update" with the plan (`Plan` column, "N to create" counts).
   */
  kind: "up" | "destroy" | "refresh" | "preview";
  /**
   * What a `preview` step previews: `pulumi destroy` and `pulumi refresh` preview first too, and
   * print "Previewing destroy" / "Previewing refresh" (`ActionLabel`, pkg/backend/apply.go).
   * @default "update"
   */
  previewOf?: "update" | "destroy" | "refresh";
  /**
   * Appended to the headline and the Duration line, e.g. "[deploy harness]": says that no CLI
   * printed this.
   */
  label?: string;
  project: string;
  stack: string;
  resources: Array<{ urn: string; op: StepOp; error?: string; diffKeys?: string[] }>;
  /** Stack outputs after the step (secret ones already shown as "[secret]"). */
  outputs: Record<string, unknown>;
  /** Outputs before the step; when given, changed outputs are marked `~`, new ones `+`. */
  previousOutputs?: Record<string, unknown>;
  /** Step errors that belong to no resource (program errors). */
  errors: string[];
  /**
   * The provider host's output lines (`DeployResult.hostOutput`): the CLI prints them as they are
   * (no `error:` prefix) under the stack's row in `Diagnostics:`, even when nothing failed.
   */
  hostOutput?: string[];
  durationMs: number;
}

const SYMBOL: Record<StepOp, string> = {
  create: "+ ",
  update: "~ ",
  replace: "+-",
  delete: "- ",
  same: "  ",
  read: "> ",
  failed: "  ",
};
const PAST: Record<StepOp, string> = {
  create: "created",
  update: "updated",
  replace: "replaced",
  delete: "deleted",
  same: "",
  read: "read",
  failed: "failed",
};
const PLAN: Record<StepOp, string> = {
  create: "create",
  update: "update",
  replace: "replace",
  delete: "delete",
  same: "",
  read: "read",
  failed: "failed",
};
const SUMMARY: Array<[StepOp, string, string]> = [
  ["create", "+", "created"],
  ["update", "~", "updated"],
  ["replace", "+-", "replaced"],
  ["delete", "-", "deleted"],
];

/** `urn:pulumi:stack::project::type::name` → `{ type, name }`. */
export function parseUrn(urn: string): { type: string; name: string } {
  const parts = urn.split("::");
  return { type: parts[2] ?? urn, name: parts[3] ?? "" };
}

/** A value in Pulumi's output notation: strings quoted, objects and arrays one entry per line. */
export function renderValue(value: unknown, indent: string): string {
  if (value === null || value === undefined) return "<null>";
  if (typeof value === "string")
    return value === "[secret]" ? "[secret]" : value === UNKNOWN ? "[unknown]" : JSON.stringify(value);
  if (typeof value !== "object") return String(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const lines = value.map((v, i) => `${inner}[${i}]: ${renderValue(v, inner)}`);
    return `[\n${lines.join("\n")}\n${indent}]`;
  }
  // Keys in the display's order (`PropertyMap.StableKeys`: sorted).
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  if (entries.length === 0) return "{}";
  const width = Math.max(...entries.map(([k]) => k.length));
  const lines = entries.map(([k, v]) => `${inner}${k.padEnd(width)}: ${renderValue(v, inner)}`);
  return `{\n${lines.join("\n")}\n${indent}}`;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const isScalar = (v: unknown) => v === null || typeof v !== "object";

/** Pulumi-style duration: "850ms", "3s", "1m4s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

/** The whole summary of one step, as lines of text (no trailing newline). */
export function renderStep(view: StepView): string {
  const out: string[] = [];
  const isPreview = view.kind === "preview";
  const verb = {
    up: "Updating",
    destroy: "Destroying",
    refresh: "Refreshing",
    preview: `Previewing ${view.previewOf ?? "update"}`,
  }[view.kind];
  const tag = view.label ? `  ${view.label}` : "";
  out.push(`${verb} (${view.stack}):${tag}`, "");

  const shown = view.resources.filter((r) => r.op !== "same");
  const failed = view.resources.filter((r) => r.op === "failed");
  const stackName = `${view.project}-${view.stack}`;
  const anyCreated = view.resources.some((r) => r.op === "create");
  const firstDeploy =
    (view.kind === "up" || isPreview) && anyCreated && !view.resources.some((r) => r.op !== "create");
  const destroyedAll = view.kind === "destroy" && failed.length === 0;
  const stackOp: StepOp = firstDeploy ? "create" : destroyedAll ? "delete" : "same";
  const programErrors = view.errors.filter((e) => !failed.some((r) => r.error === e));
  const errorCount = failed.length + programErrors.length;
  // The stack's row fails with its own errors only (the `update failed` summary, program errors):
  // each row counts the error diagnostics attached to it (progress.go `DiagInfo().ErrorCount`).
  const stackErrors = programErrors.length;
  const stackStatus = stackErrors > 0 ? "**failed**" : (isPreview ? PLAN : PAST)[stackOp];
  const stackInfo = stackErrors > 0 ? `${stackErrors} error${stackErrors > 1 ? "s" : ""}` : "";
  const rows: Array<[string, string, string, string, string]> = [
    [SYMBOL[stackOp], "pulumi:pulumi:Stack", stackName, stackStatus, stackInfo],
  ];
  shown.forEach((r, i) => {
    const { type, name } = parseUrn(r.urn);
    const branch = i === shown.length - 1 ? "└─ " : "├─ ";
    const status = r.op === "failed" ? "**failed**" : (isPreview ? PLAN : PAST)[r.op];
    const info = r.op === "failed" ? "1 error" : r.diffKeys?.length ? `[diff: ~${r.diffKeys.join(",")}]` : "";
    rows.push([SYMBOL[r.op], branch + type, name, status, info]);
  });
  const typeWidth = Math.max("Type".length, ...rows.map((r) => r[1].length));
  const nameWidth = Math.max("Name".length, ...rows.map((r) => r[2].length));
  const statusHead = isPreview ? "Plan" : "Status";
  const statusWidth = Math.max(statusHead.length, ...rows.map((r) => r[3].length));
  const row = (sym: string, type: string, name: string, status: string, info: string) =>
    ` ${sym}  ${type.padEnd(typeWidth)}  ${name.padEnd(nameWidth)}  ${status.padEnd(statusWidth)}  ${info}`.trimEnd();
  out.push(row("  ", "Type", "Name", statusHead, "Info"));
  for (const r of rows) out.push(row(...r));

  const hostOutput = view.hostOutput ?? [];
  if (errorCount > 0 || hostOutput.length > 0) {
    out.push("", "Diagnostics:");
    for (const r of failed) {
      const { type, name } = parseUrn(r.urn);
      out.push(`  ${type} (${name}):`, `    error: ${(r.error ?? "failed").replace(/\n/g, "\n    ")}`);
    }
    // The stack's row has one header; under it its errors, then the host's output as one block
    // (`printDiagnostics`: one header per row, each stream merged; display/progress.go).
    if (programErrors.length > 0 || hostOutput.length > 0) out.push(`  pulumi:pulumi:Stack (${stackName}):`);
    for (const e of programErrors) out.push(`    error: ${e.replace(/\n/g, "\n    ")}`);
    out.push(...hostOutput.map((l) => `    ${l}`));
  }

  // A failed update prints no Outputs: the engine stops scheduling at the first failure, and the
  // stack's outputs (registered when the program's exports resolve) are not recorded
  // (deployment_executor.go, Execute: cancels the plan on a step error).
  const stepFailed = failed.length > 0 || programErrors.length > 0;
  if (view.kind !== "destroy" && !stepFailed) {
    const lines = isPreview
      ? previewOutputLines(view.outputs, view.previousOutputs)
      : updateOutputLines(view.outputs, view.previousOutputs);
    if (lines.length > 0) out.push("", "Outputs:", ...lines);
  }

  out.push("", "Resources:");
  const counts = new Map<StepOp, number>();
  counts.set(stackOp, 1);
  for (const r of view.resources) counts.set(r.op, (counts.get(r.op) ?? 0) + 1);
  // The order and wording of display/diff.go `renderSummaryEvent`: one line per kind of change;
  // then, on one line joined by ". ", `N changes` (only with two kinds or more) and `N unchanged`;
  // then, last, `N errored`.
  let kinds = 0;
  let changes = 0;
  for (const [op, sym, label] of SUMMARY) {
    const n = counts.get(op);
    if (!n) continue;
    kinds += 1;
    changes += n;
    out.push(`    ${sym} ${n} ${isPreview ? `to ${PLAN[op]}` : label}`);
  }
  const pieces: string[] = [];
  if (kinds >= 2) pieces.push(`${changes} ${changes === 1 ? "change" : "changes"}`);
  if (counts.get("same")) pieces.push(`${counts.get("same")} unchanged`);
  if (pieces.length > 0) out.push(`    ${pieces.join(". ")}`);
  // `N errored`: the rows with an error, the stack's included (progress.go `printSummary` passes
  // them to `renderSummaryEvent` as resourcesErrored).
  const errored = (counts.get("failed") ?? 0) + (stackErrors > 0 ? 1 : 0);
  if (errored) out.push(`    ${errored} errored`);
  if (!isPreview) out.push("", `Duration: ${formatDuration(view.durationMs)}${tag}`);
  return out.join("\n");
}

/**
 * The Outputs section of an update (`printOutputs`, display/progress.go, with
 * `getResourceOutputsPropertiesString` in display/object_diff.go): every stack output, even
 * unchanged ones (the stack shows its sames outside planning); changed ones `~`, new ones `+`,
 * removed ones `-`.
 */
function updateOutputLines(
  outputs: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
): string[] {
  const keys = Object.keys(outputs);
  const removed = previous ? Object.keys(previous).filter((k) => !(k in outputs)) : [];
  if (keys.length === 0 && removed.length === 0) return [];
  const width = Math.max(...[...keys, ...removed].map((k) => k.length));
  const lines: string[] = [];
  for (const k of keys) {
    const now = outputs[k];
    if (previous && !(k in previous)) {
      lines.push(`  + ${k.padEnd(width)}: ${renderValue(now, "    ")}`);
    } else if (previous && !same(previous[k], now)) {
      lines.push(`  ~ ${k.padEnd(width)}: ${changedText(previous[k], now)}`);
    } else {
      lines.push(`    ${k.padEnd(width)}: ${renderValue(now, "    ")}`);
    }
  }
  for (const k of removed) lines.push(`  - ${k.padEnd(width)}: ${renderValue(previous?.[k], "    ")}`);
  return lines;
}

/**
 * The Outputs section of a preview (`getResourceOutputsPropertiesString` while planning, and
 * `massageStackPreviewOutputDiff`, display/object_diff.go): a plan always shows the stack's
 * outputs. With no earlier outputs, each one the display prints (`shouldPrintPropertyValue`: not
 * null, "", [] or {}), a value not known yet as `[unknown]`; with earlier outputs, only what
 * changes (sames are hidden while planning), and a value becoming unknown is not shown as a change.
 */
function previewOutputLines(
  outputs: Record<string, unknown>,
  previous: Record<string, unknown> | undefined,
): string[] {
  const printable = (v: unknown) =>
    !(v === null || v === undefined || v === "") &&
    !(Array.isArray(v) && v.length === 0) &&
    !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
  const shown = (v: unknown) => (v === UNKNOWN ? "[unknown]" : renderValue(v, "    "));
  if (previous === undefined) {
    const keys = Object.keys(outputs)
      .filter((k) => printable(outputs[k]))
      .sort();
    if (keys.length === 0) return [];
    const width = Math.max(...keys.map((k) => k.length));
    return keys.map((k) => `    ${k.padEnd(width)}: ${shown(outputs[k])}`);
  }
  const added = Object.keys(outputs).filter((k) => !(k in previous));
  const removed = Object.keys(previous).filter((k) => !(k in outputs));
  const changed = Object.keys(outputs).filter(
    (k) => k in previous && outputs[k] !== UNKNOWN && !same(previous[k], outputs[k]),
  );
  const keys = [...added, ...removed, ...changed].sort();
  if (keys.length === 0) return [];
  const width = Math.max(...keys.map((k) => k.length));
  return keys.map((k) =>
    added.includes(k)
      ? `  + ${k.padEnd(width)}: ${shown(outputs[k])}`
      : removed.includes(k)
        ? `  - ${k.padEnd(width)}: ${renderValue(previous[k], "    ")}`
        : `  ~ ${k.padEnd(width)}: ${changedText(previous[k], outputs[k])}`,
  );
}

/** A changed output: `old => new` for scalars, the new value for objects and arrays. */
function changedText(before: unknown, now: unknown): string {
  const shownNow = renderValue(now, "    ");
  return isScalar(before) && isScalar(now) ? `${renderValue(before, "")} => ${shownNow}` : shownNow;
}
