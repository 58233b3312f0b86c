/**
 * Arguments with their documentation: a field of a create body taken as it is (its checks, bounds
 * and messages) and given the doc the generated argument type and the reference page are written
 * from (`.meta({ description, default?, replaces? })`, read by `scripts/gen-types.mts`).
 *
 * Also here: the container settings a template and an endpoint both take from their create body,
 * with the checks every resource applies to them. Their words stay each resource's own: a
 * template's change applies in place, an endpoint's makes a release, and each says so in its text.
 */
import type { z } from "zod";
import { checkedEnvNames, checkedPorts } from "./checkArgs";

/**
 * An argument's doc: its description (a `\n` breaks the doc comment's line), or the description
 * with the default the service or provider applies and `replaces` (`true`, or when a change
 * replaces the resource).
 */
export type ArgDoc = string | { description: string; default?: string; replaces?: true | string };

/** The metadata `.meta` takes for `doc`. */
const metaOf = (doc: ArgDoc) => (typeof doc === "string" ? { description: doc } : doc);

/**
 * The fields of `shape` that `docs` names, in the order `docs` gives them, each validating as the
 * original does and carrying its doc.
 */
export function documented<S extends Record<string, z.ZodType>, K extends keyof S & string>(
  shape: S,
  docs: Record<K, ArgDoc>,
): Pick<S, K> {
  const fields = Object.entries<ArgDoc>(docs).map(([key, doc]) => [key, shape[key]!.meta(metaOf(doc))]);
  return Object.fromEntries(fields) as Pick<S, K>;
}

/**
 * `schema` with some of its fields replaced (by documented copies): its checks, strictness and
 * error messages kept, so the copy validates exactly as the original does.
 */
export function withFields<S extends z.ZodObject>(schema: S, fields: Partial<S["shape"]>): S {
  return schema.clone({ ...schema.def, shape: { ...schema.shape, ...fields } });
}

/** `schema` with the fields `docs` names documented, validating exactly as the original does. */
export function withDocs<S extends z.ZodObject, K extends keyof S["shape"] & string>(
  schema: S,
  docs: Record<K, ArgDoc>,
): S {
  return withFields(schema, documented(schema.shape as S["shape"], docs) as Partial<S["shape"]>);
}

/** The container settings of a create body (the v2 document's names for templates and endpoints). */
type ContainerBody = {
  image: z.ZodType;
  args: z.ZodType;
  disk: z.ZodType;
  env: z.ZodType<Record<string, string> | undefined>;
  ports: z.ZodType<string[] | undefined>;
  registry: z.ZodType;
};

/**
 * The container settings `docs` names, from `body`, documented: `env` with its names checked
 * ({@link checkedEnvNames}) and each `ports` entry checked ({@link checkedPorts}), the others as the
 * body has them. (A pod's body checks its ports itself, and its env names beside the body.)
 */
export function containerFields<B extends ContainerBody, K extends keyof ContainerBody>(
  body: B,
  docs: Record<K, ArgDoc>,
): Pick<B, K> {
  const checked = { ...body, env: checkedEnvNames(body.env), ports: checkedPorts(body.ports) };
  return documented(checked as B, docs);
}
