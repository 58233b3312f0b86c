/**
 * `s3ConfigDigest`: what a JobRun keeps of its `s3Config` instead of the value, so the secret never
 * reaches state (even encrypted) while `diff` still notices a change. New digests are salted
 * scrypt; digests written by 0.1.0 (salted HMAC-SHA256) are still recognised, never written.
 */
import { createHmac, randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/** JSON text with sorted keys and no `undefined`, for comparing argument values. */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v) =>
      v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, (v as Record<string, unknown>)[k]]),
          )
        : v,
    ) ?? "undefined"
  );
}

/**
 * scrypt cost of new digests: N = 2^15, r = 8, p = 1 (32 MiB, the OWASP floor is N = 2^17 at
 * 128 MiB). Measured on the project's 2-core machine (Node 24): median 108 ms per digest
 * (2^14: 45 ms, 2^16: 242 ms). Paid once at create and once per diff of a JobRun with s3Config,
 * on libuv's thread pool (`crypto.scrypt`, not the sync variant), so the host keeps serving other
 * resources. A guess at the secret costs the same 0.1 s instead of 11 us with 0.1.0's HMAC.
 */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const SCRYPT_PREFIX = `scrypt-n${SCRYPT.N}-r${SCRYPT.r}-p${SCRYPT.p}`;
const SCRYPT_KEY_BYTES = 32;

function scryptHex(text: string, salt: Buffer): Promise<string> {
  return new Promise((resolve, reject) =>
    scrypt(text, salt, SCRYPT_KEY_BYTES, SCRYPT, (error, key) =>
      error ? reject(error) : resolve(key.toString("hex")),
    ),
  );
}

/**
 * `scrypt-n32768-r8-p1:<salt hex>:<key hex>` of the canonical JSON of an s3Config: a slow, salted
 * KDF, because the salt is stored beside it and the secret may be weak.
 */
export async function digestS3Config(s3Config: unknown, salt: Buffer = randomBytes(16)): Promise<string> {
  const key = await scryptHex(canonicalJson(s3Config), salt);
  return `${SCRYPT_PREFIX}:${salt.toString("hex")}:${key}`;
}

/** 0.1.0's digest, `hmac-sha256:<salt hex>:<digest hex>`: only read from old states, never written. */
function legacyHmac(s3Config: unknown, salt: Buffer): string {
  return createHmac("sha256", salt).update(canonicalJson(s3Config)).digest("hex");
}

/**
 * True when `s3Config` is the value `digest` was made from: a digest of this version (scrypt) or
 * of 0.1.0 (`hmac-sha256:`, so old states diff without a spurious update).
 */
export async function s3ConfigMatches(digest: unknown, s3Config: unknown): Promise<boolean> {
  if (typeof digest !== "string") return s3Config === undefined;
  if (s3Config === undefined) return false;
  const [scheme, saltHex, mac] = digest.split(":");
  if (!saltHex || !mac || !/^[0-9a-f]+$/i.test(saltHex)) return false;
  const salt = Buffer.from(saltHex, "hex");
  let again: string;
  if (scheme === SCRYPT_PREFIX) again = await scryptHex(canonicalJson(s3Config), salt);
  else if (scheme === "hmac-sha256") again = legacyHmac(s3Config, salt);
  else return false;
  return again.length === mac.length && timingSafeEqual(Buffer.from(again), Buffer.from(mac));
}
