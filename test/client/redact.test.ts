/**
 * One redaction module (`src/client/redact.ts`) for the client's errors and the providers'
 * scrubber: every form a server plausibly echoes a secret in, in an error's message, body and
 * headers, and in what `redactError` hands the provider host.
 */
import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { APIError, MIN_REDACTED_LENGTH, REDACTED, redactText, secretForms } from "../../src/client";
import { redactError } from "../../src/provider/common/engineText";
import { redact } from "../../src/provider/common/redaction";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { API_KEY, clientFor } from "./helpers";

const username = "deploy-bot";
// Characters that each encoding writes differently: space, '+', '/', '&', '<', quotes, non-ASCII.
const password = `pa ss+w/rd&<ké>"it's"`;
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const b64url = (s: string) => Buffer.from(s, "utf8").toString("base64url");

/** Each form a server plausibly echoes the password in, by name. */
const echoes: Record<string, string> = {
  raw: password,
  json: JSON.stringify(password).slice(1, -1),
  jsonAscii: JSON.stringify(password)
    .slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
  uriComponent: encodeURIComponent(password),
  uriComponentLowerHex: encodeURIComponent(password).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  formEncoded: new URLSearchParams({ p: password }).toString().slice(2),
  html: password.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"),
  htmlApos: password
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;"),
  htmlHexApos: password
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#x27;"),
  base64: b64(password),
  base64NoPad: b64(password).replace(/=+$/, ""),
  base64url: b64url(password),
  dockerAuth: b64(`${username}:${password}`),
  dockerAuthUrl: b64url(`${username}:${password}`),
  basicHeader: `Basic ${b64(`${username}:${password}`)}`,
  // A whole JSON document encoded at once: the password at an arbitrary byte alignment.
  embeddedBase64: b64(JSON.stringify({ auths: { "r.example.com": { password } } })),
};

/** The echo's secret-bearing part survives in `text`. */
function survivors(text: string): string[] {
  return Object.entries(echoes)
    .filter(([name, form]) => {
      if (name === "embeddedBase64") {
        // The run of characters that encodes the password's bytes (past a 3-byte boundary on each side).
        const whole = form;
        const start =
          JSON.stringify({ auths: { "r.example.com": { password: "" } } }).indexOf('password":"') + 11;
        const from = Math.ceil(((start + 3) * 4) / 3);
        const core = whole.slice(from, from + 12);
        return text.includes(core);
      }
      return text.includes(form);
    })
    .map(([name]) => name);
}

describe("secretForms", () => {
  it("lists every form, longest first, for a value and for a login", () => {
    const forms = secretForms([{ username, password }, API_KEY]);
    for (const [name, form] of Object.entries(echoes)) {
      if (name === "embeddedBase64" || name === "basicHeader") continue;
      expect([name, forms.includes(form)]).toEqual([name, true]);
    }
    expect([...forms].sort((a, b) => b.length - a.length)).toEqual(forms);
  });

  it(`ignores values shorter than ${MIN_REDACTED_LENGTH} characters and non-strings, as before`, () => {
    expect(secretForms(["abc", undefined, null, 42, { username: "u", password: "pw" }])).toEqual([]);
    expect(redactText("abc", ["abc"])).toBe("abc");
  });

  it("replaces a form that contains another whole", () => {
    expect(redactText(`x ${echoes.json} y`, [password])).toBe(`x ${REDACTED} y`);
  });
});

describe("the client's error answers", () => {
  let server: ScriptedServer;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("carry no form of the registry login in the message, body or headers", async () => {
    const lines = [`user=${username}`, ...Object.entries(echoes).map(([name, form]) => `${name}=${form}`)];
    server.enqueue({
      status: 400,
      // Header values must be ASCII: the forms that are carry over there too.
      headers: { "x-echo": lines.filter((l) => /^[\x20-\x7e]*$/.test(l)).join(" ; ") },
      body: { message: lines.join(" | "), detail: { echoed: lines } },
    });
    const e = (await clientFor(server)
      .registryAuths.create({ name: "n", username, password })
      .catch((x: unknown) => x)) as APIError;
    expect(e).toBeInstanceOf(APIError);
    expect(survivors(e.message)).toEqual([]);
    expect(survivors(JSON.stringify(e.body))).toEqual([]);
    expect(survivors(JSON.stringify(e.headers))).toEqual([]);
    expect(survivors(`${e.stack} ${inspect(e, { depth: 10 })}`)).toEqual([]);
    expect(e.headers["x-echo"]).toContain(REDACTED);
    expect(e.message).toContain("raw=[redacted]");
    // The username alone is no secret.
    expect(e.message).toContain(`user=${username}`);
  });

  it("carry no form of the API key, in a text body past its 4 KB cut", async () => {
    const key = API_KEY;
    const text = `${"x".repeat(4090)}${key} ${encodeURIComponent(key)} ${b64(key)}`;
    server.enqueue({ status: 502, headers: { "content-type": "text/plain" }, body: text });
    const e = (await clientFor(server, { maxRetries: 0 })
      .registryAuths.list()
      .catch((x: unknown) => x)) as APIError;
    const exposed = `${e.message} ${JSON.stringify(e.body)} ${JSON.stringify(e.headers)}`;
    expect(exposed).not.toContain(key.slice(0, 6));
    expect(exposed).not.toContain(b64(key).slice(0, 12));
  });
});

describe("the providers' scrubber (src/provider/shared.ts) uses the same forms", () => {
  it("redacts every form from an error's message and stack", () => {
    const message = Object.entries(echoes)
      .map(([name, form]) => `${name}=${form}`)
      .join("\n");
    const clean = redactError(new Error(message), [{ username, password }, API_KEY]);
    expect(survivors(clean.message)).toEqual([]);
    expect(survivors(clean.stack ?? "")).toEqual([]);
    expect(survivors(redact(message, [{ username, password }]))).toEqual([]);
  });

  it("redacts an s3 accessSecret echoed URL-encoded, form-encoded, HTML-escaped or in base64", () => {
    const accessSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY EXAMPLEKEY";
    const forms = [
      encodeURIComponent(accessSecret),
      new URLSearchParams({ s: accessSecret }).toString().slice(2),
      b64(accessSecret),
      b64url(accessSecret),
      accessSecret.replace(/&/g, "&amp;"),
    ];
    const clean = redact(`worker said: ${forms.join(" ")}`, [accessSecret]);
    for (const form of forms) expect(clean).not.toContain(form);
    expect(clean).toBe(`worker said: ${forms.map(() => REDACTED).join(" ")}`);
  });
});

describe("forms a worker or a proxy really writes", () => {
  const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY/EXAMPLE=";
  it("redacts path-quoted forms that keep '/' (Python's quote(), encodeURI) and hex dumps", () => {
    const python = secret.replace(/\+/g, "%2B").replace(/=/g, "%3D");
    const text = [
      `quote: ${python}`,
      `lower: ${python.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())}`,
      `hex: ${Buffer.from(secret).toString("hex")}`,
      `HEX: ${Buffer.from(secret).toString("hex").toUpperCase()}`,
    ].join("\n");
    const out = redactText(text, [secret]);
    expect(out).toBe("quote: [redacted]\nlower: [redacted]\nhex: [redacted]\nHEX: [redacted]");
  });
});

describe("no error the client builds keeps an endpoint's env values", () => {
  const TOKEN = "hf_FAKEtokenForTests0123456789";
  const endpoint = (extra: Record<string, unknown>) => ({
    id: "ep1",
    name: "api",
    env: { HF_TOKEN: TOKEN, MODEL: "llama" },
    ...extra,
  });

  it("drops env values from a malformed answer's body (schema drift), keeping the names", async () => {
    const server = await startScriptedServer();
    try {
      server.enqueue({ body: endpoint({ workers: "many" }) });
      const client = clientFor(server, { restUrl: `${server.url}/v2` });
      const error = await client.serverless.get("ep1").catch((e: unknown) => e);
      expect((error as { code?: string }).code).toBe("response_validation_error");
      expect((error as { body: { env: unknown } }).body.env).toEqual({ HF_TOKEN: REDACTED, MODEL: REDACTED });
      expect(inspect(error, { depth: 10 })).not.toContain(TOKEN);
    } finally {
      await server.close();
    }
  });

  it("drops env values from an error answer that echoes the endpoint (a 500)", async () => {
    const server = await startScriptedServer();
    try {
      server.enqueue({ status: 500, body: { message: "internal", endpoint: endpoint({}) } });
      const client = clientFor(server, { restUrl: `${server.url}/v2`, maxRetries: 0 });
      const error = await client.serverless.get("ep1").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APIError);
      expect(inspect(error, { depth: 10 })).not.toContain(TOKEN);
      expect(JSON.stringify((error as APIError).body)).toContain('"HF_TOKEN":"[redacted]"');
    } finally {
      await server.close();
    }
  });
});
