import { randomBytes } from "node:crypto";
import { foreignGid, invalidPrefix } from "./errors.js";

const PREFIX_SHAPE = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;
/** 9 base-36 digits of milliseconds (sortable until the year 5188), then 16 hex digits of randomness. */
const UNIQUE_SHAPE = /^[0-9a-z]{9}[0-9a-f]{16}$/;

/**
 * Global transaction ids are `<prefix>_<unique>`. The unique part never contains `_`, so the prefix
 * `geo_a` cannot claim `geo_a_b_<unique>` issued by coordinator `geo_a_b`: ownership is an exact parse,
 * not a LIKE.
 */
export class GidFactory {
  readonly prefix: string;

  constructor(prefix: string) {
    if (!PREFIX_SHAPE.test(prefix)) throw invalidPrefix(prefix);
    this.prefix = prefix;
  }

  next(now: number = Date.now()): string {
    return `${this.prefix}_${now.toString(36).padStart(9, "0")}${randomBytes(8).toString("hex")}`;
  }

  /** True only for ids this prefix issued; another system's prepared transactions answer false. */
  owns(gid: string): boolean {
    return (
      gid.length === this.prefix.length + 26 &&
      gid.startsWith(`${this.prefix}_`) &&
      UNIQUE_SHAPE.test(gid.slice(this.prefix.length + 1))
    );
  }

  /** Milliseconds since the epoch, by the issuing process's clock, at which one of our gids was issued. */
  issuedAt(gid: string): number | undefined {
    if (!this.owns(gid)) return undefined;
    return Number.parseInt(gid.slice(this.prefix.length + 1, this.prefix.length + 10), 36);
  }

  assertOwn(gid: string): string {
    if (!this.owns(gid)) throw foreignGid(gid, this.prefix);
    return gid;
  }
}
