/**
 * Property paths as the engine reads `ignoreChanges`, ported from pulumi/pulumi
 * sdk/go/common/resource/properties_path.go (`parsePropertyPath`, `PropertyPath.reset`/`Reset`) and
 * `processIgnoreChanges` (pkg/resource/deploy/step_generator.go). Values are plain JSON-like data:
 * the harness hands the host unwrapped secrets, so the secret re-marking of `reset` has no part here.
 *
 * ```ts
 * processIgnoreChanges({ expect: { timeoutMs: 5 } }, { expect: { timeoutMs: 1 } }, ["expect.timeoutMs"]);
 * // => { inputs: { expect: { timeoutMs: 1 } }, invalidPaths: [] }
 * ```
 */

/** One path: object keys (strings, `*` for any) and array indexes. */
export type PropertyPath = Array<string | number>;

/**
 * `ParsePropertyPath` (non-strict): `a.b`, `a["b.c"]`, `a[0]`, `a[*].b`; any run of characters up to
 * the next `.` or `[` is a key. Throws on a malformed path (the engine then skips it silently).
 */
export function parsePropertyPath(text: string): PropertyPath {
  const elements: PropertyPath = [];
  let path = text;
  if (path.startsWith(".")) throw new Error("expected property path to start with a name or index");
  while (path.length > 0) {
    if (path[0] === ".") {
      path = path.slice(1);
      if (path.length === 0) throw new Error("expected property path to end with a name or index");
      continue;
    }
    if (path[0] === "[") {
      if (path.length > 1 && path[1] === '"') {
        let key = "";
        let i = 2;
        for (;;) {
          if (i >= path.length) throw new Error("missing closing quote in property name");
          if (path[i] === '"') {
            i++;
            break;
          }
          if (path[i] === "\\" && i + 1 < path.length && path[i + 1] === '"') {
            key += '"';
            i += 2;
          } else {
            key += path[i];
            i++;
          }
        }
        if (i >= path.length || path[i] !== "]")
          throw new Error("missing closing bracket in property access");
        elements.push(key);
        path = path.slice(i + 1);
      } else {
        const close = path.indexOf("]");
        if (close === -1) throw new Error("missing closing bracket in array index");
        const segment = path.slice(1, close);
        if (segment === "*") elements.push("*");
        else {
          // strconv.ParseInt(segment, 10, 0): an optional sign and decimal digits.
          if (!/^[+-]?[0-9]+$/.test(segment)) throw new Error(`invalid array index: ${segment}`);
          elements.push(Number.parseInt(segment, 10));
        }
        path = path.slice(close + 1);
      }
      continue;
    }
    let i = 0;
    while (i < path.length && path[i] !== "." && path[i] !== "[") i++;
    elements.push(path.slice(0, i));
    path = path.slice(i);
  }
  return elements;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A key the program set: the SDK does not send `undefined` values, so they are absent keys. */
const has = (o: Obj, k: string) => Object.hasOwn(o, k) && o[k] !== undefined;

/**
 * `PropertyPath.reset`: sets the location `p` in `next` to its value in `old`, creating and deleting
 * nothing but the last object key; returns false for a path error (an added or removed element).
 */
function reset(p: PropertyPath, old: unknown, next: unknown): boolean {
  if (p.length === 0) return false;
  const [key, ...rest] = p;
  if (typeof key === "number") {
    if (key < 0) return false;
    const oldArr = Array.isArray(old) ? old : undefined;
    const newArr = Array.isArray(next) ? next : undefined;
    if (rest.length === 0) {
      if (!oldArr && !newArr) return true;
      if (!oldArr || !newArr) return false;
      if (key >= oldArr.length && key >= newArr.length) return true;
      if (key >= oldArr.length || key >= newArr.length) return false;
      newArr[key] = oldArr[key];
      return true;
    }
    if (!oldArr || !newArr) return !oldArr && !newArr;
    if (key >= oldArr.length || key >= newArr.length) return false;
    return reset(rest, oldArr[key], newArr[key]);
  }
  if (key === "*") {
    if (rest.length === 0) {
      if (isObject(next)) {
        if (isObject(old)) {
          for (const k of Object.keys(old)) next[k] = old[k];
          for (const k of Object.keys(next)) if (!Object.hasOwn(old, k)) delete next[k];
        }
        return true;
      }
      if (Array.isArray(next)) {
        if (Array.isArray(old)) {
          for (let i = 0; i < old.length && i < next.length; i++) next[i] = old[i];
          if (old.length !== next.length) return false;
        }
        return true;
      }
      return false;
    }
    if (isObject(old) && isObject(next)) {
      for (const k of Object.keys(old)) {
        if (!has(old, k) || !has(next, k)) return false;
        if (!reset(rest, old[k], next[k])) return false;
      }
      return true;
    }
    if (Array.isArray(old) && Array.isArray(next)) {
      for (let i = 0; i < old.length && i < next.length; i++) if (!reset(rest, old[i], next[i])) return false;
      return old.length === next.length;
    }
    return false;
  }
  if (rest.length === 0) {
    if (isObject(old) && has(old, key)) {
      if (!isObject(next)) return false;
      next[key] = old[key];
    } else if (isObject(next)) {
      delete next[key];
    }
    return true;
  }
  if (!isObject(old) || !isObject(next)) return !isObject(old) && !isObject(next);
  const hasOld = has(old, key);
  const hasNew = has(next, key);
  if (hasOld && !hasNew) return false;
  if (!hasOld && !hasNew) return true;
  return reset(rest, hasOld ? old[key] : null, next[key]);
}

/**
 * `processIgnoreChanges` (step_generator.go): a copy of `inputs` with each ignored path reset to its
 * value in `oldInputs`. Paths that do not parse are skipped; paths through an added or removed
 * element are `invalidPaths`, which the engine reports as an info diagnostic ({@link ignoreChangesInfo}).
 */
export function processIgnoreChanges(
  inputs: Record<string, unknown>,
  oldInputs: Record<string, unknown>,
  ignoreChanges: string[],
): { inputs: Record<string, unknown>; invalidPaths: string[] } {
  const next = structuredClone(inputs);
  const invalidPaths: string[] = [];
  for (const text of ignoreChanges) {
    let path: PropertyPath;
    try {
      path = parsePropertyPath(text);
    } catch {
      continue;
    }
    if (!reset(path, oldInputs, next)) invalidPaths.push(text);
  }
  return { inputs: next, invalidPaths };
}

/** The info diagnostic for invalid paths: `%q` of the paths joined with ", ". */
export function ignoreChangesInfo(invalidPaths: string[]): string {
  return `cannot ignore changes in added or removed elements of the path: ${JSON.stringify(invalidPaths.join(", "))}`;
}
