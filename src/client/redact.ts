/**
 * The one redaction module of the package: the client scrubs error answers with it before an
 * error is built, and the providers scrub every error, log line and output they hand to the
 * Pulumi provider host with it (`provider/common/redaction.ts` and `engineText.ts` build on it).
 *
 * A service (or a proxy in front of it) that echoes a request does not always echo a secret as
 * it was sent: it may quote it in JSON, percent-encode it (a query string or form body), HTML-
 * escape it (an error page), quote it as a path (`/` kept), dump it as hex, or show the base64
 * `username:password` of a Docker registry login
 * (`auth` in `~/.docker/config.json`, `Authorization: Basic`). {@link secretForms} lists every
 * such form of each secret, and the redactors replace them longest first, so a form that
 * contains another (the base64 of `user:password` contains neither, but a JSON-escaped value
 * may contain the raw one) is replaced whole.
 */

/** What a redacted secret reads as. */
export const REDACTED = "[redacted]";

/**
 * Secrets shorter than this, in characters, are not redacted (they would mangle ordinary words).
 * The same floor as before this module existed (the client and the provider scrubber both used 4).
 */
export const MIN_REDACTED_LENGTH = 4;

/**
 * A secret to redact: a value (a password, an API key, an s3 `accessSecret`), or a login sent as
 * a pair, whose joined forms (base64 of `username:password`) are secret although the username is
 * not. Anything else (`undefined`, numbers) is ignored, so callers may pass optional fields.
 */
export type Secret = string | RegistryLogin | null | undefined;

/** A username and password that travel together (Docker's registry auth). */
export interface RegistryLogin {
  username?: string | null;
  password?: string | null;
}

/** Headers whose values are never kept on an error, whatever they hold. */
const SECRET_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"]);

const HTML_ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** HTML-escaped forms: the usual five characters, with each spelling of `'` in use. */
function htmlForms(value: string): string[] {
  const base = value.replace(/[&<>"]/g, (c) => HTML_ENTITIES[c] as string);
  const textOnly = value.replace(/[&<>]/g, (c) => HTML_ENTITIES[c] as string);
  const numeric = value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return [
    base,
    textOnly,
    numeric,
    base.replace(/'/g, "&#39;"),
    base.replace(/'/g, "&#x27;"),
    base.replace(/'/g, "&apos;"),
  ];
}

/** `encodeURIComponent`, as `application/x-www-form-urlencoded` writes it, and lower-case hex. */
function percentForms(value: string): string[] {
  const component = encodeURIComponent(value);
  const form = new URLSearchParams([["", value]]).toString().slice(1);
  const lower = (s: string) => s.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
  return [component, form, lower(component), lower(form), form.replace(/\+/g, "%20")];
}

/**
 * Percent-encoding as path-quoting libraries write it, with `/` kept: Python's `urllib.parse.quote`
 * (everything but letters, digits, `_.-~` and `/`, upper-case hex) and `encodeURI`-style paths.
 * AWS secret keys contain `/`, so `encodeURIComponent`'s form alone misses these.
 */
function pathQuotedForms(value: string): string[] {
  const quoted = [...Buffer.from(value, "utf8")]
    .map((byte) => {
      const c = String.fromCharCode(byte);
      return /[A-Za-z0-9_.~/-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
  const component = encodeURIComponent(value).replace(/%2F/g, "/");
  return [quoted, quoted.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), component];
}

/** The value's UTF-8 bytes as hex (a debug dump, `bytes.hex()`), lower- and upper-case. */
function hexForms(value: string): string[] {
  const hex = Buffer.from(value, "utf8").toString("hex");
  return [hex, hex.toUpperCase()];
}

/** JSON string content: as `JSON.stringify` writes it, and with non-ASCII as `\uXXXX` too. */
function jsonForms(value: string): string[] {
  const plain = JSON.stringify(value).slice(1, -1);
  const ascii = plain.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [plain, ascii, plain.replace(/\//g, "\\/")];
}

/** Standard base64 with and without padding, and base64url. */
function base64Forms(bytes: Buffer): string[] {
  const standard = bytes.toString("base64");
  return [standard, standard.replace(/=+$/, ""), bytes.toString("base64url")];
}

/**
 * The base64 text of `value` wherever it sits inside a longer encoded blob (a JSON body or a
 * config file encoded whole): for each of the three byte alignments, the run of characters that
 * depends on the secret's bytes alone, in both alphabets.
 */
function embeddedBase64Forms(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  const out: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    // Characters 0..skip-1 carry bits of the padding bytes; the last full sextet ends the run.
    const skip = offset === 0 ? 0 : offset === 1 ? 2 : 3;
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(skip, end);
    if (core.length >= MIN_REDACTED_LENGTH) out.push(core, core.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return out;
}

/** Every form of one secret value a server plausibly echoes. */
function valueForms(value: string): string[] {
  return [
    value,
    ...jsonForms(value),
    ...percentForms(value),
    ...pathQuotedForms(value),
    ...hexForms(value),
    ...htmlForms(value),
    ...base64Forms(Buffer.from(value, "utf8")),
    ...embeddedBase64Forms(value),
    // A JSON document encoded whole holds the value JSON-escaped.
    ...embeddedBase64Forms(JSON.stringify(value).slice(1, -1)),
  ];
}

const usableString = (v: unknown): v is string => typeof v === "string" && v.length >= MIN_REDACTED_LENGTH;

/**
 * Every text to replace for these secrets, longest first. Values shorter than
 * {@link MIN_REDACTED_LENGTH} are skipped (a login's pair forms are kept when its password is
 * long enough).
 */
export function secretForms(secrets: readonly unknown[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (usableString(secret)) {
      for (const form of valueForms(secret)) forms.add(form);
    } else if (secret && typeof secret === "object") {
      const { username, password } = secret as RegistryLogin;
      if (!usableString(password)) continue;
      for (const form of valueForms(password)) forms.add(form);
      if (typeof username === "string") {
        const joined = Buffer.from(`${username}:${password}`, "utf8");
        for (const form of base64Forms(joined)) forms.add(form);
      }
    }
  }
  return [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
}

/** `text` with every form in `forms` (longest first, from {@link secretForms}) replaced. */
function replaceForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
  return out;
}

/** `text` with every form of each secret replaced by `[redacted]`. */
export function redactText(text: string, secrets: readonly unknown[]): string {
  const forms = secretForms(secrets);
  return forms.length === 0 ? text : replaceForms(text, forms);
}

/**
 * `value` with every form of each secret inside its strings replaced by `[redacted]`, walking
 * arrays and plain objects (a service error body that echoes the request). Keys are kept.
 */
export function redactValue<T>(value: T, secrets: readonly unknown[]): T {
  const forms = secretForms(secrets);
  if (forms.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return replaceForms(v, forms);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * `value` with the values of every `env` map inside it replaced by `[redacted]` (names kept): an
 * endpoint's or template's `env` holds tokens (`HF_TOKEN`), so an error that keeps an answer's
 * body (a malformed answer, a 500 echoing the endpoint) must not keep them, whoever reads the error
 * (Pulumi prints a failed lookup's error whole, with `util.inspect`).
 */
export function redactEnvMaps<T>(value: T): T {
  const walk = (v: unknown, key?: string): unknown => {
    // A release's `diff` entries carry changed values raw (`{ field: "env.TOKEN", old, new }`),
    // and a malformed entry may not even say which field it is: none of their values is kept.
    if (Array.isArray(v)) return v.map((x) => (key === "diff" ? redactDiffEntry(x) : walk(x)));
    if (v === null || typeof v !== "object") return v;
    const entries = Object.entries(v as Record<string, unknown>);
    if (key === "env") return Object.fromEntries(entries.map(([name]) => [name, REDACTED]));
    return Object.fromEntries(entries.map(([k, x]) => [k, walk(x, k)]));
  };
  const redactDiffEntry = (entry: unknown): unknown => {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return REDACTED;
    return Object.fromEntries(
      Object.entries(entry as Record<string, unknown>).map(([k, x]) => [
        k,
        k === "field" && typeof x === "string" ? x : REDACTED,
      ]),
    );
  };
  return walk(value) as T;
}

/**
 * Copies response headers (names lower-cased, repeated values joined with ", "): credential
 * headers become `[redacted]` whole, and every form of each secret in the others is replaced.
 */
export function redactHeaders(
  headers: Record<string, string | string[] | undefined> = {},
  secrets: readonly unknown[] = [],
): Record<string, string> {
  const forms = secretForms(secrets);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = key.toLowerCase();
    const text = Array.isArray(value) ? value.join(", ") : value;
    out[lower] = SECRET_HEADERS.has(lower) ? REDACTED : replaceForms(text, forms);
  }
  return out;
}
