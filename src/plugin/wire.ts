/**
 * gRPC and Pulumi's generated protocol stubs, loaded from the `@pulumi/pulumi` copy installed beside
 * this package (a peer dependency), so the plugin speaks exactly the protocol of the SDK the user
 * has, with the `@grpc/grpc-js` that SDK's stubs were generated for (one grpc-js instance: a
 * service definition from one copy cannot be served by another). Nothing else of the SDK is loaded:
 * its root module (runtime, output machinery) costs start time the plugin does not need.
 */
import { createRequire } from "node:module";

/** The part of google-protobuf's `Struct` used here (the package ships no types). */
export interface StructClass {
  fromJavaScript(value: Record<string, unknown>): StructMessage;
}
/** A `google.protobuf.Struct` message. */
export interface StructMessage {
  toJavaScript(): Record<string, unknown>;
}

/** The loaded modules. */
export interface Wire {
  grpc: typeof import("@grpc/grpc-js");
  provider: typeof import("@pulumi/pulumi/proto/provider_pb.js");
  providerGrpc: typeof import("@pulumi/pulumi/proto/provider_grpc_pb.js");
  plugin: typeof import("@pulumi/pulumi/proto/plugin_pb.js");
  engine: typeof import("@pulumi/pulumi/proto/engine_pb.js");
  engineGrpc: typeof import("@pulumi/pulumi/proto/engine_grpc_pb.js");
  status: typeof import("@pulumi/pulumi/proto/status_pb.js");
  Struct: StructClass;
  /** `google.protobuf.Empty`. */
  Empty: new () => object;
  /** `google.protobuf.Any`. */
  Any: new () => { pack(bytes: Uint8Array, typeName: string): void };
}

let loaded: Wire | undefined;

/** The modules, loaded once. */
export function wire(): Wire {
  if (loaded) return loaded;
  const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
  loaded = {
    grpc: fromSdk("@grpc/grpc-js"),
    provider: fromSdk("./proto/provider_pb"),
    providerGrpc: fromSdk("./proto/provider_grpc_pb"),
    plugin: fromSdk("./proto/plugin_pb"),
    engine: fromSdk("./proto/engine_pb"),
    engineGrpc: fromSdk("./proto/engine_grpc_pb"),
    status: fromSdk("./proto/status_pb"),
    Struct: fromSdk("google-protobuf/google/protobuf/struct_pb").Struct,
    Empty: fromSdk("google-protobuf/google/protobuf/empty_pb").Empty,
    Any: fromSdk("google-protobuf/google/protobuf/any_pb").Any,
  };
  return loaded;
}
