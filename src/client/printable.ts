/**
 * The one rule for text the service (or a worker) wrote, before it enters a message, a log line
 * or a stored field: every control character shown as its escape. No imports: the client's
 * errors and the providers' messages both use it.
 */

/** Control characters: C0 (NUL..US), DEL and C1, which terminals act on (ESC starts ANSI sequences). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** As {@link CONTROL}, sparing line feed and tab (a worker's error text may be a multi-line trace). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_BUT_LF_TAB = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text the service or a worker wrote, made safe to print inside a message and to store: every
 * control character shown as its escape (`\u001b`), so an ANSI sequence cannot recolour or erase
 * the terminal, a BEL cannot ring, a CR cannot overwrite the line and a `\n` cannot forge a line
 * of the `pulumi up` output; then cut to `maxChars` (saying how much was cut). `multiline` keeps
 * line feeds and tabs: only for text that is lines by design (a worker's trace, a whole message
 * whose own lines are deliberate), never for one value inside a line.
 */
export function printable(text: string, maxChars = Number.POSITIVE_INFINITY, multiline = false): string {
  const escaped = text.replace(
    multiline ? CONTROL_BUT_LF_TAB : CONTROL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  if (escaped.length <= maxChars) return escaped;
  return `${escaped.slice(0, maxChars)}... [${escaped.length - maxChars} more characters]`;
}
