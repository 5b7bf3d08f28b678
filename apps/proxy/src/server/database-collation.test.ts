import { describe, expect, it } from "vitest";
import {
  collationQuery,
  createDatabaseOptions,
  type DatabaseCollation,
  describeCollation,
  parseCollation,
  sameCollation,
} from "./database-collation.js";

/** A row as `collationQuery` answers it: the pg_database row as JSON, the encoding, the version. */
function answer(row: Record<string, unknown>, encoding = "UTF8", version: string | null = null) {
  return [[JSON.stringify(row), encoding, version]];
}

const LIBC_C: DatabaseCollation = {
  provider: "libc",
  collate: "C",
  ctype: "C",
  locale: null,
  rules: null,
  encoding: "UTF8",
  version: null,
};

describe("a database's default collation read from pg_database", () => {
  it("reads PostgreSQL 15's columns (daticulocale)", () => {
    const row = { datname: "shop", datcollate: "C", datctype: "C", datlocprovider: "i", daticulocale: "und" };
    expect(parseCollation(answer(row, "UTF8", "153.112"))).toEqual({
      ...LIBC_C,
      provider: "icu",
      locale: "und",
      version: "153.112",
    });
  });

  it("reads PostgreSQL 17's renamed column (datlocale) and the builtin provider", () => {
    const row = {
      datcollate: "C",
      datctype: "C",
      datlocprovider: "b",
      datlocale: "C.UTF-8",
      daticurules: null,
    };
    expect(parseCollation(answer(row))).toMatchObject({
      provider: "builtin",
      locale: "C.UTF-8",
      rules: null,
    });
  });

  it("reads a server before 15 (no provider column) as libc", () => {
    expect(parseCollation(answer({ datcollate: "en_US.UTF-8", datctype: "en_US.UTF-8" }))).toEqual({
      ...LIBC_C,
      collate: "en_US.UTF-8",
      ctype: "en_US.UTF-8",
    });
  });

  it("gives null for no row or an answer that is not the statement's", () => {
    expect(parseCollation([])).toBeNull();
    expect(parseCollation([["not json", "UTF8", null]])).toBeNull();
    expect(parseCollation(answer({ datname: "shop" }))).toBeNull();
  });

  it("asks the library's actual version only from PostgreSQL 15 on", () => {
    expect(collationQuery("shop", "15.8")).toContain("pg_database_collation_actual_version");
    expect(collationQuery("shop", "14.11")).not.toContain("pg_database_collation_actual_version");
    expect(collationQuery("it's", "15.8")).toContain("d.datname = 'it''s'");
  });
});

describe("comparing two databases' collations", () => {
  it("finds the same collation the same", () => {
    expect(sameCollation(LIBC_C, { ...LIBC_C })).toBe(true);
  });

  it.each([
    ["provider", { provider: "icu", locale: "und" }],
    ["LC_COLLATE", { collate: "C.UTF-8" }],
    ["LC_CTYPE", { ctype: "C.UTF-8" }],
    ["ICU locale", { locale: "sv-SE" }],
    ["ICU rules", { rules: "&a < b" }],
    ["encoding", { encoding: "LATIN1" }],
    ["library version", { version: "2.36" }],
  ])("finds a different %s different", (_, change) => {
    expect(sameCollation(LIBC_C, { ...LIBC_C, ...change })).toBe(false);
  });
});

describe("naming a collation and how to create it", () => {
  const icu: DatabaseCollation = { ...LIBC_C, provider: "icu", locale: "und", version: "153.112" };

  it("describes every field that decides the order", () => {
    expect(describeCollation(icu)).toBe(
      'icu locale "und", LC_COLLATE "C", LC_CTYPE "C", UTF8, version 153.112',
    );
    expect(describeCollation(LIBC_C)).toBe('libc, LC_COLLATE "C", LC_CTYPE "C", UTF8');
  });

  it("gives the CREATE DATABASE options of that collation", () => {
    expect(createDatabaseOptions(icu)).toBe(
      "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C'",
    );
    expect(createDatabaseOptions({ ...LIBC_C, ctype: "C.UTF-8" })).toBe(
      "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER libc LC_COLLATE 'C' LC_CTYPE 'C.UTF-8'",
    );
  });
});
