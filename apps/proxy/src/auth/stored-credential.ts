import { makeScramVerifier, md5StoredPassword, parseScramVerifier, type ScramVerifier } from "@geo/proto";

/**
 * What the proxy holds to check a role's login: a SCRAM verifier or an MD5 hash, as PostgreSQL
 * stores them in pg_authid.rolpassword, plus the cleartext password when the configuration gave one
 * (then the proxy can also log in to backends as that role without passthrough).
 */
export type StoredCredential =
  | { readonly kind: "scram"; readonly verifier: ScramVerifier; readonly password?: string }
  | { readonly kind: "md5"; readonly hash: string; readonly password?: string };

const MD5_HASH = /^md5[0-9a-f]{32}$/;

/** Reads pg_authid.rolpassword text; null for anything else (a NULL, a plain password). */
export function parseStoredPassword(text: string | null): StoredCredential | null {
  if (text === null) return null;
  const verifier = parseScramVerifier(text);
  if (verifier !== null) return { kind: "scram", verifier };
  if (MD5_HASH.test(text)) return { kind: "md5", hash: text };
  return null;
}

/**
 * A configured user: a stored verifier as given, or a password turned into what PostgreSQL would
 * store for the method (a SCRAM verifier with a fresh salt, or the MD5 hash of password + role).
 */
export function credentialFromConfig(
  user: { readonly name: string; readonly password?: string; readonly verifier?: string },
  method: "scram-sha-256" | "md5",
): StoredCredential | null {
  if (user.verifier !== undefined) return parseStoredPassword(user.verifier);
  if (user.password === undefined) return null;
  return method === "md5"
    ? { kind: "md5", hash: md5StoredPassword(user.name, user.password), password: user.password }
    : { kind: "scram", verifier: makeScramVerifier(user.password), password: user.password };
}
