import { invalidLsn } from "./health-errors.js";

const lsnText = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;
const low32 = 0xffff_ffffn;

/**
 * Parses PostgreSQL's text form of a `pg_lsn` (`16/B374D848`: the high and low 32 bits of a WAL
 * byte position, in hex) into that position. Subtracting two positions gives bytes of WAL.
 *
 * @example parseLsn("0/3000060") === 0x3000060n
 */
export function parseLsn(text: string): bigint {
  const match = lsnText.exec(text);
  if (match === null) throw invalidLsn(text);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** The inverse of `parseLsn`, in PostgreSQL's own spelling (upper-case hex, no padding). */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & low32).toString(16).toUpperCase()}`;
}
