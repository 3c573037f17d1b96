// Go's strconv.Quote for JavaScript strings: Omni renders healthcheck ids in status steps with `%q`.
// PURE. Printable runes (letters, marks, numbers, punctuation, symbols, ASCII space) are kept; `"` and `\` are
// escaped; \a \b \f \n \r \t \v use their short escapes; other control bytes use \xNN; other non-printable runes
// use \uNNNN or \UNNNNNNNN (lowercase hex, as Go). A lone UTF-16 surrogate becomes U+FFFD, as it would after
// conversion to UTF-8.

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

const SHORT: Record<number, string> = {
  0x07: "\\a",
  0x08: "\\b",
  0x0c: "\\f",
  0x0a: "\\n",
  0x0d: "\\r",
  0x09: "\\t",
  0x0b: "\\v",
};

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    let cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp === 0x22) out += '\\"';
    else if (cp === 0x5c) out += "\\\\";
    else if (cp === 0x20) out += " ";
    else if (cp < 0x80 && cp >= 0x21 && cp !== 0x7f) out += String.fromCodePoint(cp);
    else if (SHORT[cp] !== undefined) out += SHORT[cp];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (PRINTABLE.test(String.fromCodePoint(cp))) out += String.fromCodePoint(cp);
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + '"';
}
