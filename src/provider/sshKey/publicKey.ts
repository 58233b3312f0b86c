/**
 * The argument of an `SshKey` (`publicKey`, one authorized_keys line) and what is read from it: its
 * type, key blob, comment and fingerprint. Checked here, locally, before any network call, so a
 * malformed key fails the preview with a message naming `publicKey` and what is allowed.
 *
 * A line is `<type> <base64> [comment]`, as `ssh-keygen` writes it to `~/.ssh/id_*.pub`. Checked:
 * the type is one OpenSSH knows for user keys (below); the base64 is canonical and decodes to the
 * key blob of RFC 4253 section 6.6 (length-prefixed fields, the first of which names the same type
 * as the line, the rest exactly the fields that type has, nothing after them); one line only;
 * no authorized_keys options before the type (`command="..."`, `from="..."`: the service takes
 * bare keys). Surrounding whitespace (the newline a `.pub` file ends with) is dropped.
 *
 * The fingerprint is what `ssh-keygen -l -E sha256` prints: `SHA256:` and the unpadded base64 of
 * the SHA-256 of the key blob. Two lines are the same key when their type and blob are equal,
 * whatever their comments.
 */
import { createHash } from "node:crypto";
import { describeType } from "../common/wording";

/**
 * Key types accepted, with the number of length-prefixed fields their blob holds after the type
 * name: ed25519 `pk`; rsa `e, n`; ecdsa `curve, Q`; the security-key forms add `application`.
 */
export const SSH_KEY_TYPES: Readonly<Record<string, number>> = {
  "ssh-ed25519": 1,
  "ssh-rsa": 2,
  "ecdsa-sha2-nistp256": 2,
  "ecdsa-sha2-nistp384": 2,
  "ecdsa-sha2-nistp521": 2,
  "sk-ssh-ed25519@openssh.com": 2,
  "sk-ecdsa-sha2-nistp256@openssh.com": 3,
};

/** The curve name an ecdsa blob must carry for its type. */
const ECDSA_CURVES: Readonly<Record<string, string>> = {
  "ecdsa-sha2-nistp256": "nistp256",
  "ecdsa-sha2-nistp384": "nistp384",
  "ecdsa-sha2-nistp521": "nistp521",
  "sk-ecdsa-sha2-nistp256@openssh.com": "nistp256",
};

/** What is allowed, for every message: the form and the types. */
export const PUBLIC_KEY_RULE =
  `one authorized_keys line "<type> <base64-key> [comment]" as in ~/.ssh/id_ed25519.pub, ` +
  `with <type> one of ${Object.keys(SSH_KEY_TYPES).join(", ")}`;

/** A parsed public key line. */
export interface SshPublicKey {
  /** The line as stored: `<type> <base64>` and ` <comment>` when there is one. */
  line: string;
  type: string;
  /** The key blob, base64 as in the line. */
  base64: string;
  /** Text after the key ("" when none). */
  comment: string;
  /** `SHA256:<unpadded base64>`, as `ssh-keygen -l` prints it. */
  fingerprint: string;
}

/** The fingerprint of a key blob given as base64 (`SHA256:...`, `ssh-keygen -l -E sha256`). */
export function fingerprintOf(base64: string): string {
  const digest = createHash("sha256").update(Buffer.from(base64, "base64")).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}

/**
 * Parses one authorized_keys line. Returns the key, or the reason it is not one (naming
 * `publicKey` and what is allowed). Never quotes the line (a mistyped paste may hold a private key).
 */
export function parsePublicKey(value: unknown): SshPublicKey | { problem: string } {
  const fail = (what: string) => ({ problem: `publicKey ${what}; expected ${PUBLIC_KEY_RULE}` });
  if (typeof value !== "string") return fail(`must be a string, got ${describeType(value)}`);
  const text = value.trim();
  if (text === "") return fail("must not be empty");
  if (/[\r\n]/.test(text)) {
    const lines = text.split(/\r?\n|\r/).filter((l) => l.trim() !== "").length;
    return fail(`holds ${lines} lines, but one SshKey manages one key: declare one SshKey per key`);
  }
  if (/PRIVATE KEY/.test(text)) return fail("looks like a PRIVATE key: give the .pub file's line instead");
  if (text.includes("\u0000")) return fail("holds a NUL character, which the service refuses");
  const [type = "", base64 = ""] = text.split(/[ \t]+/);
  const comment = text.slice(type.length).trimStart().slice(base64.length).trim();
  if (!(type in SSH_KEY_TYPES)) {
    // `command="ls" ssh-ed25519 AAAA...`: a known type further on, after options.
    const later = text
      .split(/[ \t]+/)
      .slice(1)
      .some((word) => word in SSH_KEY_TYPES);
    if (later || /^[a-z-]+=/i.test(type)) {
      return fail(
        "starts with authorized_keys options (such as command= or from=) before the key type: the service " +
          "takes bare keys, remove the options",
      );
    }
    const shown = quotedTypeName(type);
    if (shown === undefined) {
      return fail(
        "does not start with a key type (its first word is not shown: it may be key material, such as a " +
          "private key's body pasted by mistake)",
      );
    }
    return fail(`has the unknown key type ${shown}`);
  }
  if (base64 === "") return fail(`has no base64 key after the type ${type}`);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) {
    return fail(`has a key that is not valid base64 (cut short or mistyped?) after the type ${type}`);
  }
  const blob = Buffer.from(base64, "base64");
  if (blob.toString("base64") !== base64) {
    return fail(`has a key that is not valid base64 (cut short or mistyped?) after the type ${type}`);
  }
  const fields = blobFields(blob);
  if (fields === undefined) {
    return fail(`has a key whose data is cut short or malformed for a ${type} key (a truncated paste?)`);
  }
  const embedded = fields[0]?.toString("latin1") ?? "";
  if (embedded !== type) {
    return fail(
      `says ${type} but the key data is ${embeddedName(embedded)}: ` +
        "the type and the base64 must come from the same .pub line",
    );
  }
  if (fields.length !== 1 + (SSH_KEY_TYPES[type] ?? 0)) {
    return fail(`has a key whose data is cut short or malformed for a ${type} key (a truncated paste?)`);
  }
  const curve = ECDSA_CURVES[type];
  if (curve !== undefined && fields[1]?.toString("latin1") !== curve) {
    return fail(`says ${type} but the key data is on another curve`);
  }
  if (type === "ssh-ed25519" && fields[1]?.length !== 32) {
    return fail("has an ssh-ed25519 key whose data is not 32 bytes (a truncated paste?)");
  }
  const line = comment === "" ? `${type} ${base64}` : `${type} ${base64} ${comment}`;
  return { line, type, base64, comment, fingerprint: fingerprintOf(base64) };
}

/**
 * A key type name as a message may show it: quoted when it is shaped like one (lowercase words
 * joined by hyphens, such as `ssh-dss`, at most 40 characters). A word that
 * is not shaped like a type may be a private key's base64 body pasted by mistake: no part of it
 * is ever quoted (undefined).
 */
function quotedTypeName(word: string): string | undefined {
  return word.length <= 40 && /^[a-z][a-z0-9]*(-[a-z0-9@.]+)+$/.test(word) ? JSON.stringify(word) : undefined;
}

/** `a "ssh-ed25519" key`, or `not a key of any type` when the blob's first field is not shaped like a type. */
function embeddedName(embedded: string): string {
  const shown = quotedTypeName(embedded);
  return shown === undefined ? "not a key of any known type" : `a ${shown} key`;
}

/** The length-prefixed fields of a key blob, or undefined when one runs past the end. */
function blobFields(blob: Buffer): Buffer[] | undefined {
  const fields: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) return undefined;
    const length = blob.readUInt32BE(at);
    at += 4;
    if (at + length > blob.length) return undefined;
    fields.push(blob.subarray(at, at + length));
    at += length;
  }
  return fields.length > 0 ? fields : undefined;
}

/** True when two parsed keys are the same key (type and blob), whatever their comments. */
export function sameKey(a: { type: string; base64: string }, b: { type: string; base64: string }): boolean {
  return a.type === b.type && a.base64 === b.base64;
}

/**
 * A line of the account's set, read leniently (the service checks only the shape): type, base64
 * and comment as split, the fingerprint when the base64 decodes, else null.
 */
export function describeStoredKey(line: string): {
  publicKey: string;
  type: string;
  comment: string;
  fingerprint: string | null;
} {
  const parsed = parsePublicKey(line);
  if (!("problem" in parsed)) {
    return { publicKey: line, type: parsed.type, comment: parsed.comment, fingerprint: parsed.fingerprint };
  }
  const [type = "", base64 = ""] = line.trim().split(/[ \t]+/);
  const comment = line
    .trim()
    .slice(type.length + 1 + base64.length)
    .trim();
  const decodes = /^[A-Za-z0-9+/]+={0,2}$/.test(base64);
  return { publicKey: line, type, comment, fingerprint: decodes ? fingerprintOf(base64) : null };
}
