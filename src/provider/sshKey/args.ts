/**
 * The arguments of an `SshKey`: their one schema (names, the program's documented type) and
 * `check`'s validation of the one key line ({@link parsePublicKey}, in `publicKey.ts`, which the
 * lookup uses without loading zod).
 */
import { z } from "zod";
import { isUnknown } from "../common/unknown";
import { PUBLIC_KEY_RULE, parsePublicKey } from "./publicKey";

export * from "./publicKey";

/**
 * The arguments' one schema: their names, the program's argument type and its docs come from it.
 * `check` below judges `publicKey` with {@link parsePublicKey}, whose messages name what is wrong
 * with the line, rather than with the schema's string rule.
 */
export const SshKeyArgsSchema = z.strictObject({
  publicKey: z.string().meta({
    description:
      "One authorized_keys line, `<type> <base64-key> [comment]`, as in `~/.ssh/id_ed25519.pub`\n" +
      "(surrounding whitespace dropped). Types: `ssh-ed25519`, `ssh-rsa`,\n" +
      "`ecdsa-sha2-nistp256`/`384`/`521`, `sk-ssh-ed25519@openssh.com`,\n" +
      "`sk-ecdsa-sha2-nistp256@openssh.com`. Checked in the preview: the base64 must decode to a key\n" +
      "of the type named; one line, no options (`command=`, `from=`). Another key is added before\n" +
      "the old one is removed.",
    replaces: "the key itself changes (a new comment alone updates in place)",
  }),
});

/** The arguments as a program gives them; the generated `SshKeyArgs` derives from it. */
export type SshKeyArgsInput = z.input<typeof SshKeyArgsSchema>;

/** Every argument name. */
const ARG_NAMES = Object.keys(SshKeyArgsSchema.shape);

/**
 * `check`'s failures for the arguments: `publicKey` (required, one key line); no other argument.
 * `__urn`, which the resource class adds (its URN, the owner mark of the entry it writes), is kept
 * in the inputs as given.
 */
export function checkSshKeyArgs(news: Record<string, unknown>): {
  inputs: Record<string, unknown>;
  failures: { property: string; reason: string }[];
} {
  const { __provider: _provider, __urn: urn, ...given } = news;
  const owner = urn === undefined ? {} : { __urn: urn };
  const failures: { property: string; reason: string }[] = [];
  for (const key of Object.keys(given)) {
    if (!ARG_NAMES.includes(key) && given[key] !== undefined) {
      failures.push({ property: "", reason: `unknown property ${key}; allowed: ${ARG_NAMES.join(", ")}` });
    }
  }
  const value = given.publicKey;
  if (value === undefined || value === null) {
    failures.unshift({ property: "", reason: `publicKey is required: ${PUBLIC_KEY_RULE}` });
    return { inputs: { ...owner }, failures };
  }
  if (isUnknown(value)) return { inputs: { publicKey: value, ...owner }, failures };
  const parsed = parsePublicKey(value);
  if ("problem" in parsed) {
    // No property: the engine would print the value whole next to it.
    failures.unshift({ property: "", reason: parsed.problem });
    return { inputs: { publicKey: value, ...owner }, failures };
  }
  return { inputs: { publicKey: parsed.line, ...owner }, failures };
}
