import { createHash } from "node:crypto";

/** The only channel binding type offered: a hash of the server's certificate (RFC 5929). */
export const TLS_SERVER_END_POINT = "tls-server-end-point";

/** Signature algorithm OIDs whose hash is not SHA-256. MD5 and SHA-1 ones also use SHA-256 (RFC 5929 4.1). */
const HASH_BY_SIGNATURE_OID: Readonly<Record<string, string>> = {
  "1.2.840.113549.1.1.12": "sha384", // sha384WithRSAEncryption
  "1.2.840.113549.1.1.13": "sha512", // sha512WithRSAEncryption
  "1.2.840.10045.4.3.3": "sha384", // ecdsa-with-SHA384
  "1.2.840.10045.4.3.4": "sha512", // ecdsa-with-SHA512
};

/**
 * The `tls-server-end-point` binding data for a certificate (DER): its hash with the hash function
 * of its own signature algorithm, SHA-256 for MD5, SHA-1 and anything not listed. A client that
 * sees the same certificate computes the same bytes; a man in the middle presenting another
 * certificate cannot.
 */
export function tlsServerEndPoint(certificateDer: Buffer): Buffer {
  const oid = signatureAlgorithmOid(certificateDer);
  const hash = (oid !== null && HASH_BY_SIGNATURE_OID[oid]) || "sha256";
  return createHash(hash).update(certificateDer).digest();
}

interface Tlv {
  readonly tag: number;
  readonly start: number;
  readonly end: number;
}

/** Reads one DER tag-length-value at `at`; null when it does not fit. */
function tlv(der: Buffer, at: number, limit: number): Tlv | null {
  if (at + 2 > limit) return null;
  const tag = der[at]!;
  let length = der[at + 1]!;
  let start = at + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > limit) return null;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[start + i]!;
    start += bytes;
  }
  return start + length > limit ? null : { tag, start, end: start + length };
}

/** Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm SEQUENCE { OID, ... }, signature }. */
function signatureAlgorithmOid(der: Buffer): string | null {
  const certificate = tlv(der, 0, der.length);
  if (certificate === null || certificate.tag !== 0x30) return null;
  const tbs = tlv(der, certificate.start, certificate.end);
  if (tbs === null) return null;
  const algorithm = tlv(der, tbs.end, certificate.end);
  if (algorithm === null || algorithm.tag !== 0x30) return null;
  const oid = tlv(der, algorithm.start, algorithm.end);
  if (oid === null || oid.tag !== 0x06 || oid.end === oid.start) return null;
  return decodeOid(der.subarray(oid.start, oid.end));
}

function decodeOid(bytes: Buffer): string {
  const first = bytes[0]!;
  const parts = [Math.min(Math.floor(first / 40), 2), first - Math.min(Math.floor(first / 40), 2) * 40];
  let value = 0;
  for (let i = 1; i < bytes.length; i++) {
    value = value * 128 + (bytes[i]! & 0x7f);
    if ((bytes[i]! & 0x80) === 0) {
      parts.push(value);
      value = 0;
    }
  }
  return parts.join(".");
}
