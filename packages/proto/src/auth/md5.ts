import { createHash, timingSafeEqual } from "node:crypto";

function md5Hex(...parts: (string | Uint8Array)[]): string {
  const hash = createHash("md5");
  for (const part of parts) hash.update(part);
  return hash.digest("hex");
}

/**
 * What pg_authid stores for an MD5 password: "md5" + md5(password + username). The user name acts
 * as the salt, which is why renaming a role invalidates its MD5 password.
 */
export function md5StoredPassword(user: string, password: string): string {
  return `md5${md5Hex(password, user)}`;
}

/** The answer to AuthenticationMD5Password computed from a stored "md5..." hash and the salt. */
export function md5FromStored(stored: string, salt: Uint8Array): string {
  return `md5${md5Hex(stored.slice(3), salt)}`;
}

/**
 * The client's answer to AuthenticationMD5Password: "md5" + md5(md5(password + user) + salt),
 * sent in a PasswordMessage.
 */
export function md5PasswordHash(user: string, password: string, salt: Uint8Array): string {
  return md5FromStored(md5StoredPassword(user, password), salt);
}

/** Server side: checks a client's MD5 answer against the stored hash, in constant time. */
export function verifyMd5Password(stored: string, salt: Uint8Array, response: string): boolean {
  if (!/^md5[0-9a-f]{32}$/.test(stored)) return false;
  const expected = Buffer.from(md5FromStored(stored, salt), "utf8");
  const actual = Buffer.from(response, "utf8");
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
