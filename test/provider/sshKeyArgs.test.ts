/**
 * SshKey's local key check (no network): every key type OpenSSH writes to a `.pub` file is taken,
 * with the fingerprint `ssh-keygen -l -E sha256` prints for it; malformed lines fail naming
 * `publicKey` and what is allowed.
 */
import { describe, expect, it } from "vitest";
import { UNKNOWN } from "../../src/provider/common/unknown";
import { checkSshKeyArgs, parsePublicKey } from "../../src/provider/sshKey/args";
import { checkSshKey, diffSshKey } from "../../src/provider/sshKey/operations";
import { KEYS, PRIVATE_KEY_BODY } from "../fixtures/sshKeys";

/** A security-key ecdsa line (blob: type, curve, point, application); ssh-keygen needs a real point to print it. */
const SK_ECDSA =
  "sk-ecdsa-sha2-nistp256@openssh.com AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0AAAAAEc3NoOg==";

function problemOf(value: unknown): string {
  const parsed = parsePublicKey(value);
  if (!("problem" in parsed)) throw new Error("expected the key to be refused");
  return parsed.problem;
}

describe("publicKey check", () => {
  it.each(Object.entries(KEYS))(
    "takes a %s key and prints the fingerprint ssh-keygen prints",
    (_name, key) => {
      const parsed = parsePublicKey(key.line);
      if ("problem" in parsed) throw new Error(parsed.problem);
      expect(parsed.fingerprint).toBe(key.fingerprint);
      expect(parsed.line).toBe(key.line);
      expect(parsed.type).toBe(key.line.split(" ")[0]);
      expect(parsed.comment).toBe(key.line.split(" ")[2]);
    },
  );

  it("takes a security-key ecdsa key without a comment", () => {
    const parsed = parsePublicKey(SK_ECDSA);
    if ("problem" in parsed) throw new Error(parsed.problem);
    expect(parsed).toMatchObject({ type: "sk-ecdsa-sha2-nistp256@openssh.com", comment: "" });
    expect(parsed.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  it("drops the final newline of a .pub file and keeps a comment with spaces", () => {
    const parsed = parsePublicKey(`${KEYS.ed25519.line} laptop 2026\n`);
    if ("problem" in parsed) throw new Error(parsed.problem);
    expect(parsed.comment).toBe("me@ed25519 laptop 2026");
    expect(parsed.line).toBe(`${KEYS.ed25519.line} laptop 2026`);
  });

  it("refuses truncated base64 (a paste cut short), naming publicKey and what is allowed", () => {
    const [type, base64] = KEYS.rsa.line.split(" ") as [string, string];
    const cut = base64.slice(0, 200); // still valid base64 text, but the key data ends early
    const problem = problemOf(`${type} ${cut} me`);
    expect(problem).toMatch(/^publicKey has a key whose data is cut short or malformed for a ssh-rsa key/);
    expect(problem).toContain('expected one authorized_keys line "<type> <base64-key> [comment]"');
    expect(problem).toContain("ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256");
  });

  it("refuses base64 that does not decode", () => {
    expect(problemOf("ssh-ed25519 AAAAC3Nza!C1lZDI1NTE5 me")).toMatch(/not valid base64/);
    expect(problemOf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICyvtxBcf6 me")).toMatch(/not valid base64/);
  });

  it("refuses a line whose type does not match the type inside the key data", () => {
    const base64 = KEYS.ed25519.line.split(" ")[1];
    expect(problemOf(`ssh-rsa ${base64} me`)).toMatch(/says ssh-rsa but the key data is a "ssh-ed25519" key/);
    const p256 = KEYS.nistp256.line.split(" ")[1];
    expect(problemOf(`ecdsa-sha2-nistp384 ${p256}`)).toMatch(/says ecdsa-sha2-nistp384 but the key data/);
  });

  it("refuses several lines: one SshKey manages one key", () => {
    const problem = problemOf(`${KEYS.ed25519.line}\n${KEYS.rsa.line}\n`);
    expect(problem).toMatch(/^publicKey holds 2 lines, but one SshKey manages one key/);
  });

  it("refuses authorized_keys options before the key type", () => {
    expect(problemOf(`command="uptime" ${KEYS.ed25519.line}`)).toMatch(/starts with authorized_keys options/);
    expect(problemOf(`no-pty,from="10.0.0.0/8" ${KEYS.ed25519.line}`)).toMatch(
      /starts with authorized_keys options/,
    );
  });

  it("refuses an unknown type, an empty value, a non-string and a private key without quoting it", () => {
    expect(problemOf("ssh-dss AAAAB3NzaC1kc3MAAACBAP me")).toMatch(/unknown key type "ssh-dss"/);
    expect(problemOf("  ")).toMatch(/^publicKey must not be empty/);
    expect(problemOf(42)).toMatch(/^publicKey must be a string, got a number/);
    const privateKey = "-----BEGIN OPENSSH PRIVATE KEY-----b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ";
    const problem = problemOf(privateKey);
    expect(problem).toMatch(/looks like a PRIVATE key/);
    expect(problem).not.toContain("b3BlbnNzaC1rZXktdjE");
  });

  it("refuses a private key's base64 body, and key data of no type, quoting none of it", () => {
    const body = PRIVATE_KEY_BODY;
    const quotesSomeOf = (text: string, of: string) =>
      Array.from({ length: of.length - 7 }, (_, at) => of.slice(at, at + 8)).some((part) =>
        text.includes(part),
      );
    const alone = problemOf(body);
    expect(alone).toMatch(/^publicKey does not start with a key type \(its first word is not shown/);
    expect(quotesSomeOf(alone, body)).toBe(false);
    const withComment = problemOf(`${body.slice(0, 120)} me@laptop`);
    expect(withComment).toMatch(/^publicKey does not start with a key type/);
    expect(quotesSomeOf(withComment, body)).toBe(false);
    // A type followed by data whose first field is not a type name: the field is not quoted either.
    const data = Buffer.concat([
      Buffer.from([0, 0, 0, 48]),
      Buffer.from(body.slice(20, 68)),
      Buffer.alloc(8),
    ]);
    const typed = problemOf(`ssh-ed25519 ${data.toString("base64")}`);
    expect(typed).toMatch(/says ssh-ed25519 but the key data is not a key of any known type/);
    expect(quotesSomeOf(typed, body)).toBe(false);
  });

  it("refuses a NUL character, which the service refuses", () => {
    expect(problemOf(`${KEYS.ed25519.line}\u0000x`)).toMatch(
      /^publicKey holds a NUL character, which the service refuses/,
    );
  });

  it("check answers the normalised line and passes an unknown value in a preview", async () => {
    expect(checkSshKeyArgs({ publicKey: `${KEYS.ed25519.line}\n` })).toEqual({
      inputs: { publicKey: KEYS.ed25519.line },
      failures: [],
    });
    expect(checkSshKeyArgs({ publicKey: UNKNOWN }).failures).toEqual([]);
    expect((await checkSshKey(undefined, {}, {})).failures).toEqual([
      { property: "", reason: expect.stringMatching(/^publicKey is required: one authorized_keys line/) },
    ]);
    expect((await checkSshKey(undefined, {}, { publicKey: KEYS.rsa.line, comment: "x" })).failures).toEqual([
      { property: "", reason: "unknown property comment; allowed: publicKey" },
    ]);
  });

  it("check refuses a REST v1 restUrl before any network call", async () => {
    const { failures } = await checkSshKey(
      { restUrl: "https://api.runpod.io/v1" },
      {},
      { publicKey: KEYS.rsa.line },
    );
    expect(failures).toEqual([
      { property: "", reason: expect.stringMatching(/^SshKey needs the REST v2 interface/) },
    ]);
  });
});

describe("SshKey diff", () => {
  const olds = { publicKey: KEYS.ed25519.line };

  it("a new comment on the same key changes in place", async () => {
    const news = { publicKey: KEYS.ed25519.line.replace("me@ed25519", "me@laptop") };
    expect(await diffSshKey(KEYS.ed25519.fingerprint, olds, news)).toEqual({
      changes: true,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("another key replaces, adding the new one before removing the old", async () => {
    const diff = await diffSshKey(KEYS.ed25519.fingerprint, olds, { publicKey: KEYS.rsa.line });
    expect(diff).toEqual({ changes: true, replaces: ["publicKey"], deleteBeforeReplace: false });
  });

  it("the same line is no change; an unknown one may replace", async () => {
    expect((await diffSshKey(KEYS.ed25519.fingerprint, olds, { ...olds })).changes).toBe(false);
    expect((await diffSshKey(KEYS.ed25519.fingerprint, olds, { publicKey: UNKNOWN })).replaces).toEqual([
      "publicKey",
    ]);
  });
});
