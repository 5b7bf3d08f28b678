/**
 * SASLprep (RFC 4013) as PostgreSQL applies it to SCRAM passwords: ASCII passwords pass unchanged;
 * otherwise non-ASCII spaces become spaces, "mapped to nothing" characters are dropped and the
 * result is NFKC-normalized. When the prepared string would contain a prohibited character the
 * password is used as given, which is also what the server does, so both sides agree.
 * (Unassigned code points and the bidirectional rules are not checked: both only ever turn a
 * prepared string back into the raw one, and the raw one is what we use then too.)
 */
export function saslPrep(password: string): string {
  if (/^[\x00-\x7f]*$/.test(password)) return password;
  let mapped = "";
  for (const ch of password) {
    const cp = ch.codePointAt(0)!;
    if (isMappedToNothing(cp)) continue;
    mapped += isNonAsciiSpace(cp) ? " " : ch;
  }
  const prepared = mapped.normalize("NFKC");
  for (const ch of prepared) if (isProhibited(ch.codePointAt(0)!)) return password;
  return prepared;
}

function isMappedToNothing(cp: number): boolean {
  return (
    cp === 0xad ||
    cp === 0x34f ||
    cp === 0x1806 ||
    (cp >= 0x180b && cp <= 0x180d) ||
    (cp >= 0x200b && cp <= 0x200d) ||
    cp === 0x2060 ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    cp === 0xfeff
  );
}

function isNonAsciiSpace(cp: number): boolean {
  return (
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200b) ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

function isProhibited(cp: number): boolean {
  return (
    cp < 0x20 ||
    (cp >= 0x7f && cp <= 0x9f) ||
    isNonAsciiSpace(cp) ||
    cp === 0x6dd ||
    cp === 0x70f ||
    cp === 0x180e ||
    (cp >= 0x200c && cp <= 0x200f) ||
    (cp >= 0x2028 && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x206f) ||
    (cp >= 0x2ff0 && cp <= 0x2ffb) ||
    (cp >= 0xd800 && cp <= 0xf8ff) ||
    (cp >= 0xfdd0 && cp <= 0xfdef) ||
    (cp >= 0xfff9 && cp <= 0xffff) ||
    (cp >= 0x1d173 && cp <= 0x1d17a) ||
    (cp & 0xfffe) === 0xfffe ||
    cp >= 0xf0000 ||
    cp === 0xe0001 ||
    (cp >= 0xe0020 && cp <= 0xe007f) ||
    cp === 0x340 ||
    cp === 0x341
  );
}
