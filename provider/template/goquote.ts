// Go's `%q` / strconv.Quote for strings, so that ids and names in messages are quoted exactly as Omni quotes them.
// Printable runes (Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space) are kept;
// everything else is escaped the way strconv does (\a \b \f \n \r \t \v, \xHH below 0x20 and 0x7f, \uHHHH, \UHHHHHHHH).

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

function escapeRune(ch: string, cp: number): string {
  if (ch === '"') return '\\"';
  if (ch === "\\") return "\\\\";
  if (PRINTABLE.test(ch)) return ch;
  switch (ch) {
    case "\x07": return "\\a";
    case "\b": return "\\b";
    case "\f": return "\\f";
    case "\n": return "\\n";
    case "\r": return "\\r";
    case "\t": return "\\t";
    case "\v": return "\\v";
  }
  if (cp < 0x20 || cp === 0x7f) return "\\x" + hex(cp, 2);
  // A lone UTF-16 surrogate is encoded as U+FFFD in UTF-8, a printable rune Go keeps as it is.
  if (cp >= 0xd800 && cp <= 0xdfff) return "\ufffd";
  if (cp < 0x10000) return "\\u" + hex(cp, 4);
  return "\\U" + hex(cp, 8);
}

/** Go's `%q` of a string: `"a\"b"`, `"tab\there"`, `"caf\u00a0"`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) out += escapeRune(ch, ch.codePointAt(0)!);
  return out + '"';
}

/** Go's `%q` of a []string: `["a" "b"]`. */
export function goQuoteList(items: readonly string[]): string {
  return "[" + items.map(goQuote).join(" ") + "]";
}

/**
 * The quoting of Go's `time` package error messages (`time.quote`): ASCII kept (with `"` and `\` escaped), every
 * byte of a non-ASCII or control character written as `\xHH`.
 */
export function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x80 || cp < 0x20) {
      for (const b of new TextEncoder().encode(ch)) out += "\\x" + hex(b, 2);
    } else {
      if (ch === '"' || ch === "\\") out += "\\";
      out += ch;
    }
  }
  return out + '"';
}
