/**
 * The plugin's gRPC server: Pulumi's ResourceProvider protocol served from the SDK's generated
 * stubs (`./wire.ts`), dispatching to the operations modules (`./resources.ts`) and, for `Invoke`,
 * to the lookups a TypeScript program calls (`./functions.ts`).
 *
 * Not the SDK's `@pulumi/pulumi/provider` `main()`: it ignores `Configure`'s arguments (the
 * provider gets no config) and answers `CheckConfig`/`DiffConfig` as unimplemented, so config
 * could be neither checked nor diffed. Every answer the engine reads is derived from its source
 * (pulumi/pulumi `pkg/resource/plugin/provider_plugin.go`, `pkg/resource/deploy/step_generator.go`)
 * and cited beside the code that gives it.
 */
import type * as grpcTypes from "@grpc/grpc-js";
import type * as pb from "@pulumi/pulumi/proto/provider_pb.js";
import { CANCELLED, DeploymentCancelledError } from "../provider/clock";
import type { ResourceOperations } from "../provider/common/dynamicProvider";
import { labelOf, withoutProvider } from "../provider/common/host";
import { redact } from "../provider/common/redaction";
import { isUnknown } from "../provider/common/unknown";
import type { RunpodSettings } from "../provider/config";
import {
  changedConfigKeys,
  checkConfig,
  describeSources,
  missingApiKeyMessage,
  PACKAGE_NAME,
  settingsFromArgs,
  withPluginConfigNames,
} from "./config";
import { type ServedFunction, servedFunctions } from "./functions";
import { type ServedResource, secretKeysOf, servedResources, URN_INPUT } from "./resources";
import { packageSchema, packageVersion } from "./schema";
import { type Unwrapped, unwrapProps, withoutUndefined, wrapSecrets } from "./values";
import { type StructMessage, type Wire, wire } from "./wire";

type Props = Record<string, unknown>;
type Callback<T> = (error: grpcTypes.ServiceError | null, value?: T) => void;

/** How the plugin runs. */
export interface PluginOptions {
  /** The engine's address (`host:port`), the plugin's first argument; logs go there. Absent: no engine logs. */
  engineAddress?: string;
  /** Where settings fall back to. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** The resources served. @default servedResources() */
  resources?: readonly ServedResource[];
  /** The functions served through `Invoke`. @default servedFunctions() */
  functions?: readonly ServedFunction[];
}

/** A running plugin. */
export interface RunningPlugin {
  port: number;
  close(): Promise<void>;
}

/**
 * The capabilities the plugin declares, in `Handshake` and again in `Configure` (an engine that
 * handshakes takes them from the handshake and ignores Configure's: `if p.protocol == nil` in
 * `provider.Configure`; `supportsPreview` is then assumed true, `NewProvider`).
 * - `acceptSecrets`: the engine sends secrets wrapped and no longer re-marks outputs itself
 *   (`annotateSecrets` runs only `if !protocol.acceptSecrets`), so the plugin keeps them (`./values.ts`).
 * - `supportsPreview`: the engine calls Create and Update with `preview: true` instead of echoing the
 *   inputs (`provider.Create`: `if !protocol.supportsPreview ... return req.Properties`); the plugin
 *   answers those without a write.
 * - `acceptResources`, `acceptOutputs`: false; no argument takes a resource reference or an output value.
 */
const CAPABILITIES = {
  acceptSecrets: true,
  supportsPreview: true,
  acceptResources: false,
  acceptOutputs: false,
};

/** An error the engine reads: the gRPC code and message, and for a partial failure its status details. */
function serviceError(
  w: Wire,
  code: number,
  message: string,
  metadata?: grpcTypes.Metadata,
): grpcTypes.ServiceError {
  return Object.assign(new Error(message), {
    code,
    details: message,
    metadata: metadata ?? new w.grpc.Metadata(),
  }) as grpcTypes.ServiceError;
}

/**
 * An operation's failure as the engine reads it. Code UNKNOWN, as the dynamic-provider host
 * answers (`grpcResponseFromError`): `resourceStateAndError` takes Unknown as "state unknown".
 * The message names this provider's config keys (`withPluginConfigNames`). An error with `id` (the object exists but failed to become usable) carries an
 * `ErrorResourceInitFailed` detail with the id, the properties (secrets wrapped) and the reasons:
 * `parseError` records the resource from them as a partial failure (`StatusPartialFailure`), and
 * `InitError.Error()` prints only the reasons.
 */
function operationError(
  w: Wire,
  error: unknown,
  secretKeys: Iterable<string>,
  hidden: readonly string[] = [],
): grpcTypes.ServiceError {
  const e = (error instanceof Error ? error : new Error(String(error))) as Error & {
    id?: unknown;
    properties?: Props;
    reasons?: unknown;
  };
  const code = w.grpc.status.UNKNOWN;
  // The operations redact their own secrets; a value the program gave secret is redacted here too.
  const shown = (text: string) => redact(withPluginConfigNames(text), hidden);
  const message = shown(e.message);
  if (typeof e.id !== "string" || e.id === "") return serviceError(w, code, message);
  const detail = new w.provider.ErrorResourceInitFailed();
  detail.setId(e.id);
  detail.setProperties(
    w.Struct.fromJavaScript(
      withoutUndefined(wrapSecrets(withoutId(e.properties ?? {}), secretKeys)),
    ) as never,
  );
  const reasons = Array.isArray(e.reasons) && e.reasons.length > 0 ? e.reasons.map(String) : [e.message];
  detail.setReasonsList(reasons.map(shown));
  const any = new w.Any();
  any.pack(detail.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
  const status = new w.status.Status();
  status.setCode(code);
  status.setMessage(message);
  status.addDetails(any as never);
  const metadata = new w.grpc.Metadata();
  // grpc-js sends no status details itself; the Go client reads them from this trailer.
  metadata.add("grpc-status-details-bin", Buffer.from(status.serializeBinary()));
  return serviceError(w, code, message, metadata);
}

const js = (s: StructMessage | undefined): Props => s?.toJavaScript() ?? {};

/**
 * Properties as the plugin answers them: without `id`. The engine takes a resource's id from the
 * answer's `id` field (`provider.Create`/`Read`, pkg/resource/plugin/provider_plugin.go), and `id`
 * is reserved in a package schema (`reservedNonComponentPropertyKeys`, pkg/codegen/schema/
 * reserved_keywords.go), so no SDK could expose it as an output. The operations' outputs keep it
 * where the service's record has it (a Pod's, a Template's), as the dynamic path stores them.
 */
function withoutId(props: Props): Props {
  const { id: _id, ...rest } = props;
  return rest;
}

/** Starts the plugin's server on 127.0.0.1, on a port of the system's choosing. */
export async function startPlugin(options: PluginOptions = {}): Promise<RunningPlugin> {
  const w = wire();
  const env = options.env ?? process.env;
  const served = new Map((options.resources ?? servedResources()).map((r) => [r.token, r]));
  const functions = new Map((options.functions ?? servedFunctions()).map((f) => [f.token, f]));
  /** Aborted by `Cancel`: every operation's wait ends early (see `RunpodSettings.signal`). */
  const cancellation = new AbortController();
  /** Settings with the deployment's cancellation attached (not enumerable, like `sources`). */
  const withCancellation = (resolved: RunpodSettings): RunpodSettings =>
    Object.defineProperty(resolved, "signal", { value: cancellation.signal, enumerable: false });
  let settings: RunpodSettings = withCancellation(settingsFromArgs({}, env));
  const engineAt = (address: string | undefined) =>
    address === undefined
      ? undefined
      : new w.engineGrpc.EngineClient(address, w.grpc.credentials.createInsecure());
  let engine = engineAt(options.engineAddress);

  /** Sends a log line to the engine (shown under the resource for a URN); never a value of a secret. */
  const log = (severity: "DEBUG" | "INFO" | "WARNING", message: string, urn = ""): Promise<void> => {
    if (!engine) return Promise.resolve();
    const req = new w.engine.LogRequest();
    req.setSeverity(w.engine.LogSeverity[severity]).setMessage(message).setUrn(urn);
    // Resolves once the engine took it (or refused: a log is never worth failing a call for).
    const to = engine;
    return new Promise((resolve) => to.log(req, () => resolve()));
  };

  /** The served resource of a request's type, or an error naming what is served. */
  const resourceOf = (type: string): ServedResource => {
    const found = served.get(type);
    if (found) return found;
    throw Object.assign(
      new Error(
        `${PACKAGE_NAME} does not serve ${type}: this version (${packageVersion()}) serves ` +
          `${[...served.keys()].join(", ")}. Check the resource's type, or install a newer ` +
          "pulumi-runpod-dynamic when it names a resource added since.",
      ),
      { grpcCode: w.grpc.status.INVALID_ARGUMENT },
    );
  };

  /** Settings for a call that reaches the service: throws naming the config key and the variable without a key. */
  const serviceSettings = (): RunpodSettings => {
    if (!settings.apiKey) throw new Error(missingApiKeyMessage());
    return settings;
  };

  /**
   * Settings for a call that writes (Create, Update): after `Cancel` nothing new is written, so no
   * object is made that the cancelled deployment would not wait for. The engine starts no step
   * after it signals cancellation (`deploymentExecutor.Execute`, pkg/resource/deploy/
   * deployment_executor.go); this holds even if one was already on its way.
   */
  const writeSettings = (
    r: ServedResource,
    what: "create" | "update",
    urn: string,
    id?: string,
  ): RunpodSettings => {
    if (cancellation.signal.aborted) {
      // The resource's name in the program: the URN's last part (`...::<type>::<name>`).
      const name = urn.split("::").pop() || undefined;
      const label = id ? labelOf(name, id) : name ? `"${name}"` : "";
      throw new Error(
        `${r.row.className}${label ? ` ${label}` : ""}: not ${what}d: ${CANCELLED}; nothing was sent to ` +
          `RunPod. Run pulumi up again to ${what} it.`,
      );
    }
    return serviceSettings();
  };

  /**
   * Runs `fn`, answering its value or its failure (`operationError`), with every text of `given`'s
   * values the engine sent secret shown as `[redacted]` (`secretTextsOf`).
   */
  const answer = <T>(
    callback: Callback<T>,
    secretKeys: () => Iterable<string>,
    fn: () => Promise<T>,
    hidden: () => readonly string[] = () => [],
  ) => {
    fn().then(
      (value) => callback(null, value),
      (error: unknown) => {
        const grpcCode = (error as { grpcCode?: number }).grpcCode;
        callback(
          grpcCode !== undefined
            ? serviceError(w, grpcCode, redact((error as Error).message, hidden()))
            : operationError(w, error, secretKeys(), hidden()),
        );
      },
    );
  };

  // A member left undefined is absent, as the dynamic-provider host's serialization leaves it out.
  const struct = (props: Props) => w.Struct.fromJavaScript(withoutUndefined(props)) as never;
  const ops = (r: ServedResource): ResourceOperations => r.operations();

  const service: grpcTypes.UntypedServiceImplementation = {
    getPluginInfo(_call: unknown, callback: Callback<unknown>) {
      callback(null, new w.plugin.PluginInfo().setVersion(packageVersion()));
    },

    // The engine handshakes when it starts the plugin (`NewProvider` -> `handshake`); Unimplemented
    // would make it fall back to Configure's answer.
    handshake(_call: unknown, callback: Callback<unknown>) {
      const res = new w.provider.ProviderHandshakeResponse()
        .setAcceptSecrets(CAPABILITIES.acceptSecrets)
        .setAcceptResources(CAPABILITIES.acceptResources)
        .setAcceptOutputs(CAPABILITIES.acceptOutputs);
      callback(null, res);
    },

    getSchema(call: { request: pb.GetSchemaRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          if (call.request.getSubpackageName()) throw new Error(`${PACKAGE_NAME} has no subpackages`);
          return new w.provider.GetSchemaResponse().setSchema(
            await packageSchema([...served.values()], [...functions.values()]),
          );
        },
      );
    },

    // CheckConfig: the engine sends the provider's inputs without secrets (no KeepSecrets) and
    // re-marks the returned inputs from its own (`annotateSecrets(inputs, news)`), so the inputs go
    // back as they came; a failure stops the deployment naming the key (`CheckConfigResponse.Failures`).
    checkConfig(call: { request: pb.CheckRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          const news = js(call.request.getNews() as never);
          const res = new w.provider.CheckResponse().setInputs(call.request.getNews());
          for (const f of checkConfig(unwrapProps(news).plain)) {
            res.addFailures(new w.provider.CheckFailure().setProperty(f.property).setReason(f.reason));
          }
          return res;
        },
      );
    },

    // DiffConfig: a changed setting is an update of the provider (DIFF_SOME with the keys), never a
    // replacement: a replaced provider replaces every resource it manages (`sg.diff` answers
    // ReplaceKeys ["provider"] for each), and a new key or URL addresses the same objects.
    diffConfig(call: { request: pb.DiffRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          const olds = unwrapProps(js(call.request.getOlds() as never)).plain;
          const news = unwrapProps(js(call.request.getNews() as never)).plain;
          const changed = changedConfigKeys(olds, news);
          const res = new w.provider.DiffResponse()
            .setChanges(
              changed.length > 0
                ? w.provider.DiffResponse.DiffChanges.DIFF_SOME
                : w.provider.DiffResponse.DiffChanges.DIFF_NONE,
            )
            .setDiffsList(changed)
            .setHasdetaileddiff(true);
          const detailed = res.getDetaileddiffMap();
          for (const key of changed) {
            detailed.set(
              key,
              new w.provider.PropertyDiff().setKind(w.provider.PropertyDiff.Kind.UPDATE).setInputdiff(true),
            );
          }
          return res;
        },
      );
    },

    // Configure: `args` holds the provider's inputs under their bare keys (secrets wrapped, as the
    // engine marshals with KeepSecrets); `variables` the same as `runpod-native:config:<key>` text.
    configure(call: { request: pb.ConfigureRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          const args = call.request.getArgs() as StructMessage | undefined;
          let plain: Props;
          if (args) plain = unwrapProps(js(args)).plain;
          else {
            plain = {};
            const prefix = `${PACKAGE_NAME}:config:`;
            for (const [k, v] of call.request.getVariablesMap().toArray()) {
              if (k.startsWith(prefix)) plain[k.slice(prefix.length)] = v;
            }
          }
          settings = withCancellation(settingsFromArgs(plain, env));
          await log("DEBUG", `${PACKAGE_NAME} configured: ${describeSources(settings)}`);
          return new w.provider.ConfigureResponse()
            .setAcceptsecrets(CAPABILITIES.acceptSecrets)
            .setSupportspreview(CAPABILITIES.supportsPreview)
            .setAcceptresources(CAPABILITIES.acceptResources)
            .setAcceptoutputs(CAPABILITIES.acceptOutputs);
        },
      );
    },

    // Check: the operations' check (unknowns pass untouched, no network). The inputs go back with
    // every key secret that came in secret or that the resource keeps secret (its row and class
    // rules, `./resources.ts`): with acceptSecrets the engine stores them as answered (no
    // annotateSecrets in `provider.Check`).
    check(call: { request: pb.CheckRequest }, callback: Callback<unknown>) {
      const olds = unwrapProps(js(call.request.getOlds() as never));
      const news = unwrapProps(js(call.request.getNews() as never));
      let r: ServedResource | undefined;
      const secretKeys = () => [...news.secretKeys, ...(r ? secretKeysOf(r, news.plain) : [])];
      answer(
        callback,
        secretKeys,
        async () => {
          r = resourceOf(call.request.getType());
          // What the resource class adds in a program: its URN, here the request's (`provider.Check`
          // sends `Urn: string(urn)`, pkg/resource/plugin/provider_plugin.go). Kept in the inputs, as
          // the dynamic path stores it; the detailed diff never lists it (`changedKeys`). Then the
          // arguments as the class registers them (`rules.registered`).
          const plain = withoutProvider(news.plain);
          const given = r.rules?.registered?.(plain) ?? plain;
          if (r.urnInput) given[URN_INPUT] = call.request.getUrn();
          const checked = await ops(r).check(settings, olds.plain, given);
          const inputs = checked.inputs ?? given;
          const res = new w.provider.CheckResponse().setInputs(
            struct(wrapSecrets(inputs, [...secretKeys(), ...secretKeysOf(r, inputs)])),
          );
          for (const f of checked.failures ?? []) {
            res.addFailures(
              new w.provider.CheckFailure()
                .setProperty(f.property)
                .setReason(redact(withPluginConfigNames(f.reason), secretTextsOf([news], r))),
            );
          }
          // A new resource's ceiling (Check without olds: `old == nil` in `sg.generateSteps`, no Diff
          // follows), only when it passes: beside a refusal the line would read as accepted.
          const ceiling = ceilingOf(inputs);
          if (
            Object.keys(olds.plain).length === 0 &&
            ceiling !== undefined &&
            res.getFailuresList().length === 0
          ) {
            await log("INFO", `ceiling ${ceiling} USD/h`, call.request.getUrn());
          }
          return res;
        },
        () => secretTextsOf([news], r),
      );
    },

    // Diff: the operations' plan, old outputs against new inputs. `replaces` and the detailed diff
    // agree (the engine replaces when either says so: `DiffResult.Replace()`); `deleteBeforeReplace`
    // is the operations' (the program's option overrides it, `sg.generateStepsFromDiff`). No
    // `__provider` reaches the operations: a state moved from the dynamic type diffs on its values.
    diff(call: { request: pb.DiffRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          const r = resourceOf(call.request.getType());
          const olds = withoutProvider(unwrapProps(js(call.request.getOlds() as never)).plain);
          const oldInputs = withoutProvider(unwrapProps(js(call.request.getOldInputs() as never)).plain);
          const news = withoutProvider(unwrapProps(js(call.request.getNews() as never)).plain);
          const plan = await ops(r).diff(settings, call.request.getId(), olds, news);
          const replaces = plan.replaces ?? [];
          const D = w.provider.DiffResponse.DiffChanges;
          const res = new w.provider.DiffResponse()
            .setChanges(
              plan.changes === true ? D.DIFF_SOME : plan.changes === false ? D.DIFF_NONE : D.DIFF_UNKNOWN,
            )
            .setReplacesList([...replaces])
            .setDeletebeforereplace(plan.deleteBeforeReplace === true)
            .setHasdetaileddiff(plan.changes !== undefined);
          // The figures behind `[diff: ~hourlyCost]`, which a plain preview shows without them.
          const [before, after] = [ceilingOf(oldInputs) ?? ceilingOf(olds), ceilingOf(news)];
          if (before !== undefined && after !== undefined && before !== after) {
            await log("INFO", `ceiling ${before} → ${after} USD/h`, call.request.getUrn());
          }
          if (plan.changes === true) {
            const changed = changedKeys(olds, oldInputs, news, replaces);
            res.setDiffsList(changed.map(([key]) => key));
            const K = w.provider.PropertyDiff.Kind;
            const detailed = res.getDetaileddiffMap();
            for (const [key, how] of changed) {
              const replace = replaces.includes(key);
              const kind =
                how === "add"
                  ? replace
                    ? K.ADD_REPLACE
                    : K.ADD
                  : how === "delete"
                    ? replace
                      ? K.DELETE_REPLACE
                      : K.DELETE
                    : replace
                      ? K.UPDATE_REPLACE
                      : K.UPDATE;
              detailed.set(key, new w.provider.PropertyDiff().setKind(kind).setInputdiff(true));
            }
          }
          return res;
        },
      );
    },

    // Create: in a preview (`preview: true`, since supportsPreview) nothing is written and the inputs
    // come back as the outputs to be (unknowns kept; `provider.Create` allows an empty id in a preview).
    create(call: { request: pb.CreateRequest }, callback: Callback<unknown>) {
      const props = unwrapProps(js(call.request.getProperties() as never));
      let r: ServedResource | undefined;
      const secretKeys = () => [...props.secretKeys, ...(r ? secretKeysOf(r, props.plain) : [])];
      answer(
        callback,
        secretKeys,
        async () => {
          r = resourceOf(call.request.getType());
          const inputs = withoutProvider(props.plain);
          if (call.request.getPreview()) {
            return new w.provider.CreateResponse().setProperties(struct(wrapSecrets(inputs, secretKeys())));
          }
          const created = await ops(r).create(writeSettings(r, "create", call.request.getUrn()), inputs);
          return new w.provider.CreateResponse()
            .setId(created.id)
            .setProperties(struct(wrapSecrets(withoutId(created.outs ?? {}), secretKeys())));
        },
        () => secretTextsOf([props], r),
      );
    },

    // Read: a refresh sends the state in `properties`; a `get` sends none and only `inputs`. An
    // empty id answers "gone", and the engine drops the resource from the state; without `inputs`
    // in the answer the engine keeps the old ones (`RefreshStep.Apply`, pkg/resource/deploy/step.go).
    read(call: { request: pb.ReadRequest }, callback: Callback<unknown>) {
      const state = unwrapProps(js(call.request.getProperties() as never));
      const inputs = unwrapProps(js(call.request.getInputs() as never));
      let r: ServedResource | undefined;
      const given = Object.keys(state.plain).length > 0 ? state.plain : inputs.plain;
      const secretKeys = () => [
        ...state.secretKeys,
        ...inputs.secretKeys,
        ...(r ? secretKeysOf(r, { ...given, ...inputs.plain }) : []),
      ];
      answer(
        callback,
        secretKeys,
        async () => {
          r = resourceOf(call.request.getType());
          const read = await ops(r).read(serviceSettings(), call.request.getId(), withoutProvider(given));
          const res = new w.provider.ReadResponse()
            .setId(read.id ?? "")
            .setProperties(struct(wrapSecrets(withoutId(read.props ?? {}), secretKeys())));
          if (read.inputs) res.setInputs(struct(wrapSecrets(withoutId(read.inputs), secretKeys())));
          return res;
        },
        () => secretTextsOf([state, inputs], r),
      );
    },

    // Update: in a preview nothing is written; the new inputs are the outputs to be.
    update(call: { request: pb.UpdateRequest }, callback: Callback<unknown>) {
      const olds = unwrapProps(js(call.request.getOlds() as never));
      const news = unwrapProps(js(call.request.getNews() as never));
      let r: ServedResource | undefined;
      const secretKeys = () => [
        ...olds.secretKeys,
        ...news.secretKeys,
        ...(r ? secretKeysOf(r, news.plain) : []),
      ];
      answer(
        callback,
        secretKeys,
        async () => {
          r = resourceOf(call.request.getType());
          const newInputs = withoutProvider(news.plain);
          if (call.request.getPreview()) {
            return new w.provider.UpdateResponse().setProperties(
              struct(wrapSecrets(newInputs, secretKeys())),
            );
          }
          const updated = await ops(r).update(
            writeSettings(r, "update", call.request.getUrn(), call.request.getId()),
            call.request.getId(),
            withoutProvider(olds.plain),
            newInputs,
          );
          return new w.provider.UpdateResponse().setProperties(
            struct(wrapSecrets(withoutId(updated.outs ?? {}), secretKeys())),
          );
        },
        () => secretTextsOf([olds, news], r),
      );
    },

    delete(call: { request: pb.DeleteRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          const r = resourceOf(call.request.getType());
          const props = withoutProvider(unwrapProps(js(call.request.getProperties() as never)).plain);
          await ops(r).delete(serviceSettings(), call.request.getId(), props);
          return new w.Empty();
        },
      );
    },

    // Invoke: a lookup, called as a TypeScript program calls it, with the settings Configure
    // resolved. Bad arguments answer `failures` (the engine passes them to the program's SDK, which
    // throws "Invoke of '<token>' failed: <reason> (<property>)": `resmon.Invoke`,
    // pkg/resource/deploy/source_eval.go; `deserializeResponse`, sdk/nodejs/runtime/invoke.ts); any
    // other error is the call's error (`provider.Invoke`, pkg/resource/plugin/provider_plugin.go:
    // "invocation of <token> returned an error"). The engine unmarshals the result keeping secrets
    // and, since the plugin accepts secrets, marks nothing itself (`if args.ContainsSecrets() &&
    // !protocol.acceptSecrets`): the plugin marks the row's `secretOutputs` and, when an argument
    // came secret, every field of the result.
    invoke(call: { request: pb.InvokeRequest }, callback: Callback<unknown>) {
      answer(
        callback,
        () => [],
        async () => {
          const f = functions.get(call.request.getTok());
          if (f === undefined) {
            throw Object.assign(
              new Error(
                `${PACKAGE_NAME} has no function ${call.request.getTok()}; its functions are ${[...functions.keys()].join(", ")}`,
              ),
              { grpcCode: w.grpc.status.INVALID_ARGUMENT },
            );
          }
          const args = unwrapProps(js(call.request.getArgs() as never));
          // A null argument is one left out (the engine marshals Invoke's arguments with PropagateNil).
          const given: Props = Object.fromEntries(
            Object.entries(args.plain).filter(([, value]) => value !== null && value !== undefined),
          );
          const res = new w.provider.InvokeResponse();
          const unknown = Object.keys(given).filter((key) => !f.argumentNames.includes(key));
          for (const key of unknown) {
            res.addFailures(
              new w.provider.CheckFailure()
                .setProperty(key)
                .setReason(
                  `${f.row.fn} takes no argument ${key}; its arguments are ${f.argumentNames.join(", ") || "none"}`,
                ),
            );
          }
          if (unknown.length > 0) return res;
          let result: Props;
          try {
            result = await f.invoke(given, settings);
          } catch (error) {
            // The lookups echo their arguments ("no pod with id ..."): an argument given secret is
            // shown as `[redacted]`, as the engine prints the text plain.
            const secretArgs = [...args.secretKeys].flatMap((key) => textsIn(args.plain[key]));
            const text = redact(withPluginConfigNames((error as Error).message ?? String(error)), secretArgs);
            const property = argumentOf(error, given, f.argumentNames);
            if (property === undefined)
              throw Object.assign(new Error(text), { grpcCode: w.grpc.status.UNKNOWN });
            res.addFailures(new w.provider.CheckFailure().setProperty(property).setReason(text));
            return res;
          }
          const secretKeys = args.secretKeys.size > 0 ? Object.keys(result) : (f.row.secretOutputs ?? []);
          return res.setReturn(struct(wrapSecrets(result, secretKeys)));
        },
      );
    },

    // Cancel: the engine signals cancellation on the first Ctrl-C (`SignalCancellation`,
    // pkg/host/host.go, from `deploymentExecutor.Execute`) and waits for the steps in flight, then
    // ends; a second Ctrl-C exits at once, losing whatever a step had made. So every wait in
    // flight ends now (`RunpodSettings.signal`): "Operation aborted in this way will return an
    // error (e.g., `Update` and `Create` will either a creation error or an initialization error)"
    // (`SignalCancellation`, pkg/resource/plugin/provider.go), and an object already made comes
    // back as an init error carrying its id, which the engine keeps in the state. Answered at once:
    // "advisory and non-blocking".
    cancel(_call: unknown, callback: Callback<unknown>) {
      cancellation.abort(new DeploymentCancelledError());
      void log("DEBUG", `${PACKAGE_NAME}: cancelled; waits in flight end now, nothing new is written`).then(
        () => callback(null, new w.Empty()),
      );
    },

    // Attach: an engine that attached to a plugin already running (PULUMI_DEBUG_PROVIDERS) gives its
    // address here instead of as the argument (`provider.Attach`); logs go there from now on.
    attach(call: { request: { getAddress(): string } }, callback: Callback<unknown>) {
      engine?.close();
      engine = engineAt(call.request.getAddress() || undefined);
      callback(null, new w.Empty());
    },
  };

  const server = new w.grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });
  // Methods not above (Construct, Call, Parameterize, ...) answer UNIMPLEMENTED (grpc-js does for a missing handler).
  server.addService(w.providerGrpc.ResourceProviderService, service);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", w.grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        engine?.close();
        server.tryShutdown(() => resolve());
      }),
  };
}

/**
 * The ceiling line. A plain `pulumi preview` lists a price change only as `[diff: ~hourlyCost]`
 * (the figures need `--diff`), so Diff logs `ceiling <old> → <new> USD/h` when they differ, and
 * Check of a new resource `ceiling <usd> USD/h` when it passes: none beside a failure, on which the
 * engine bails ("resource <urn> is invalid", `sg.generateSteps`), as the line would read as
 * accepted. Check has no olds exactly when the engine plans a create (`old == nil`,
 * `sg.continueStepsFromImport`, pkg/resource/deploy/step_generator.go), and no Diff follows a
 * create. What the user sees, from pulumi/pulumi: the engine takes the log with its URN
 * (`hostServer.Log`, pkg/host/host_server.go) as a diagnostic of that resource; the display shows
 * it on the resource's row and again, after the run, under the resource's header in the
 * "Diagnostics:" section (`printDiagnostics`, pkg/backend/display/progress.go) as `info: ...`.
 * INFO, not DEBUG: `renderProgressDiagEvent` drops DEBUG unless `--debug`. A figure unknown in a
 * preview, or no price on either side, logs nothing. A NetworkVolume is not priced here: its
 * `monthlyCostUsd` is computed at create and read, not by Check, so Diff has no new figure, and a
 * size change already shows as `[diff: ~size]`.
 */
/**
 * A priced resource's hourly ceiling, USD (`hourlyCost.ceilingUsd` of a Pod's, a
 * ServerlessEndpoint's or a Cluster's checked inputs or outputs); undefined when not a figure (no price, unknown in
 * a preview, not a priced resource).
 */
function ceilingOf(props: Props): number | undefined {
  const cost = props.hourlyCost as { ceilingUsd?: unknown } | null | undefined;
  const ceiling = cost !== null && typeof cost === "object" ? cost.ceilingUsd : undefined;
  return typeof ceiling === "number" ? ceiling : undefined;
}

/**
 * The texts of every value the engine sent secret in `sets`: what no message may show. The keys
 * `resource` always keeps secret are left out: its operations redact those themselves, by their
 * own rules (an env value that also stands in a plain argument is shown).
 */
function secretTextsOf(sets: readonly Unwrapped[], resource: ServedResource | undefined): string[] {
  return sets.flatMap((set) => {
    const own = new Set(resource ? secretKeysOf(resource, set.plain) : []);
    return [...set.secretKeys].filter((key) => !own.has(key)).flatMap((key) => textsIn(set.plain[key]));
  });
}

/** Every string inside `value` (at any depth): the texts a secret value may be printed as. */
function textsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(textsIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(textsIn);
  return [];
}

/**
 * The argument a lookup's error is about, when it is a refusal of one: a `ValidationError` (by its
 * stable `code`, which survives two copies of the package) whose `path` starts with an argument the
 * function takes or was given. Anything else (a missing API key, the service's answer) is not.
 */
function argumentOf(error: unknown, given: Props, argumentNames: readonly string[]): string | undefined {
  const e = error as { code?: unknown; path?: unknown } | null;
  if (e?.code !== "validation_error" || !Array.isArray(e.path)) return undefined;
  const [first] = e.path;
  return typeof first === "string" && (argumentNames.includes(first) || first in given) ? first : undefined;
}

/**
 * The input keys whose value differs from before, and how: `add` (not there before), `delete` (an
 * old input no longer given), `update`; an unknown new value counts as changed. `__urn` is never
 * listed (not an output; Check adds it). Keys the operations replace on are always listed.
 *
 * Each key is answered with `inputDiff: true`, so the engine shows its old value from the old
 * inputs (`TranslateDetailedDiff`, pkg/engine/detailedDiff.go): a key is listed when it differs
 * from them, not from an output the service filled in (an endpoint's `workers.idleTimeout`, a
 * GPU's `count`). Without old inputs, or when none differs though the operations plan a change
 * (drift a refresh found, a JobRun to run again), the old outputs are compared instead.
 */
function changedKeys(
  olds: Props,
  oldInputs: Props,
  news: Props,
  replaces: readonly string[],
): [string, "add" | "delete" | "update"][] {
  const byInputs = Object.keys(oldInputs).length > 0 ? differingKeys(oldInputs, oldInputs, news) : [];
  // Against outputs, a value is unchanged when the output holds all of it: the service fills in
  // what the program left out (a GPU's `count`), which is no change of the program's.
  const out = new Map(byInputs.length > 0 ? byInputs : differingKeys(olds, oldInputs, news, holdsAllOf));
  for (const key of replaces) if (!out.has(key)) out.set(key, "update");
  return [...out];
}

/**
 * The keys of `news` that differ from `before` (`add`, `update`; `same` judges a value, by default
 * equal as JSON), and of `oldInputs` not in `news` (`delete`).
 */
function differingKeys(
  before: Props,
  oldInputs: Props,
  news: Props,
  same: (old: unknown, now: unknown) => boolean = (old, now) => JSON.stringify(old) === JSON.stringify(now),
): [string, "add" | "delete" | "update"][] {
  const out = new Map<string, "add" | "delete" | "update">();
  for (const [key, value] of Object.entries(news)) {
    if (key === URN_INPUT) continue; // the URN Check added: no argument of the program
    if (!(key in before)) out.set(key, "add");
    else if (isUnknown(value) || !same(before[key], value)) out.set(key, "update");
  }
  for (const key of Object.keys(oldInputs)) if (!(key in news)) out.set(key, "delete");
  return [...out];
}

/**
 * True when `output` holds all of `input`: the same scalar, a list of as many items each holding
 * the input's, an object with every member of the input's held (members the service added ignored).
 */
function holdsAllOf(output: unknown, input: unknown): boolean {
  if (Array.isArray(input)) {
    return (
      Array.isArray(output) &&
      output.length === input.length &&
      input.every((v, i) => holdsAllOf(output[i], v))
    );
  }
  if (input !== null && typeof input === "object") {
    if (output === null || typeof output !== "object" || Array.isArray(output)) return false;
    const held = output as Props;
    return Object.entries(input as Props).every(([k, v]) => k in held && holdsAllOf(held[k], v));
  }
  return JSON.stringify(output) === JSON.stringify(input);
}
