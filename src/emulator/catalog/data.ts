/**
 * The catalog's tables: data centres, GPU types (RunPod's own ids, display names, VRAM, prices,
 * serverless pools, stock per data centre and product, CUDA versions), CPU flavours and public
 * templates. The tables are the JSON files beside this module, checked when it loads; records
 * are kept without the availability fields, which are worked out per request (`availability.ts`).
 */
import { z } from "zod";
import {
  AVAILABILITY_LEVELS,
  type AvailabilityLevel,
  type CpuType,
  CpuTypeSchema,
  type DataCenter,
  DataCenterSchema,
  type GpuType,
} from "../../wire/catalog";
import type { Template } from "../../wire/templates";
import cpuTypesTable from "./cpuTypes.json";
import dataCentersTable from "./dataCenters.json";
import gpuTypesTable from "./gpuTypes.json";

export type Product = "POD" | "CLUSTER" | "SERVERLESS";
const LevelSchema = z.enum(AVAILABILITY_LEVELS);
/** Stock of one resource: data centre id -> product -> level. */
const StockSchema = z.record(
  z.string(),
  z.strictObject({
    POD: LevelSchema.optional(),
    CLUSTER: LevelSchema.optional(),
    SERVERLESS: LevelSchema.optional(),
  }),
);
export type Stock = Readonly<Record<string, Partial<Record<Product, AvailabilityLevel>>>>;

/** A table shipped beside this module, checked once when the emulator loads: a typo fails loudly, naming the row. */
function table<T extends z.ZodType>(file: string, schema: T, rows: unknown): z.output<T>[] {
  const parsed = z.array(schema).safeParse(rows);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new Error(`emulator catalog ${file}: ${issue?.path.join(".")}: ${issue?.message}`);
}

export interface DataCenterEntry {
  /** Without the availability arrays (added per request). */
  record: DataCenter;
  /** ISO 3166-1 alpha-2 code of its country, for `countryCodes`. */
  country: string;
}

export const DATA_CENTERS: readonly DataCenterEntry[] = table(
  "dataCenters.json",
  z.strictObject({ country: z.string().length(2), record: DataCenterSchema }),
  dataCentersTable,
);

export interface GpuEntry {
  /** Without the availability fields (added per request). */
  record: GpuType;
  stock: Stock;
  /** CUDA versions of its machines and whether one has capacity; none for AMD. */
  cuda: readonly (readonly [version: string, available: boolean])[];
}

const CUDA_ALL = [
  ["12.8", true],
  ["12.6", true],
  ["12.4", true],
  ["12.1", false],
  ["11.8", true],
] as const;

const PriceSchema = z.strictObject({
  secure: z.number(),
  community: z.number(),
  serverless: z.number().optional(),
});
/** A row of `gpuTypes.json`: `price.serverless` is its pool's rate per GPU-hour (absent without a pool). */
const GpuRowSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  pool: z.string().nullable(),
  memory: z.number(),
  price: PriceSchema,
  maxCount: z.strictObject({ secure: z.number(), community: z.number() }),
  stock: StockSchema,
  /** Absent: every CUDA version of {@link CUDA_ALL}. */
  cuda: z.array(z.tuple([z.string(), z.boolean()]).readonly()).optional(),
});
type GpuRow = z.output<typeof GpuRowSchema>;

/** A GPU type entry from its row: the manufacturer from the id, each cloud offered when its `maxCount` is above 0. */
function gpuEntry(row: GpuRow): GpuEntry {
  return {
    record: {
      id: row.id,
      name: row.name,
      pool: row.pool,
      manufacturer: row.id.startsWith("AMD") ? "AMD" : "NVIDIA",
      memory: row.memory,
      secure: row.maxCount.secure > 0,
      community: row.maxCount.community > 0,
      price: row.price,
      maxCount: row.maxCount,
    },
    stock: row.stock,
    cuda: row.cuda ?? CUDA_ALL,
  };
}

/** `NVIDIA H200` has no pod stock anywhere: the type a pod's fallback skips. */
export const GPU_TYPES: readonly GpuEntry[] = table("gpuTypes.json", GpuRowSchema, gpuTypesTable).map(
  gpuEntry,
);

export interface CpuEntry {
  /** Without the availability fields (added per request). */
  record: CpuType;
  stock: Stock;
}

export const CPU_TYPES: readonly CpuEntry[] = table(
  "cpuTypes.json",
  z.strictObject({ record: CpuTypeSchema, stock: StockSchema }),
  cpuTypesTable,
);

/** The public template catalog, by `source`. */
export const PUBLIC_TEMPLATES: Readonly<Record<"official" | "verified" | "community", readonly Template[]>> =
  {
    official: [
      publicTemplate(
        "runpod-torch-v280",
        "Runpod PyTorch 2.8",
        "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
        false,
        {
          ports: ["8888/http", "22/tcp"],
          disk: 50,
        },
      ),
      publicTemplate("runpod-worker-comfy", "ComfyUI Serverless", "runpod/worker-comfyui:5.5.0-base", true),
      publicTemplate("runpod-worker-vllm", "vLLM Serverless", "runpod/worker-v1-vllm:v2.7.0", true),
    ],
    verified: [
      publicTemplate("ollama-verified", "Ollama", "ollama/ollama:0.12.0", false, { ports: ["11434/http"] }),
    ],
    community: [publicTemplate("whisper-worker", "Whisper worker", "example/whisper-worker:1.2.0", true)],
  };

function publicTemplate(
  id: string,
  name: string,
  image: string,
  serverless: boolean,
  extra: { ports?: string[]; disk?: number } = {},
): Template {
  return {
    id,
    name,
    image,
    args: "",
    disk: extra.disk ?? 20,
    mounts: {},
    ports: extra.ports ?? [],
    env: {},
    registry: null,
    serverless,
    public: true,
    category: "NVIDIA",
    startSsh: !serverless,
    startJupyter: !serverless,
    allowedCudaVersions: [],
  };
}

/** The ids of the catalog's data centres: where a network volume may be created. */
export const DATA_CENTER_IDS: readonly string[] = DATA_CENTERS.map(({ record }) => record.id);

/**
 * The catalog's spelling of a data centre id given in any letter case (`eu-ro-1` is `EU-RO-1`, as
 * the service compares ids), or `id` as given when the catalog has no such data centre.
 */
export function catalogDataCenterId(id: string): string {
  const upper = id.toUpperCase();
  return DATA_CENTER_IDS.find((known) => known.toUpperCase() === upper) ?? id;
}

/** Every GPU type id of the catalog, in catalog order. */
export const GPU_TYPE_IDS: readonly string[] = GPU_TYPES.map((g) => g.record.id);
