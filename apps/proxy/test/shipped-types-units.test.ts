import { Analyzer, BINARY_SCALAR_NAMES } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { shippingFormat } from "../src/scatter/typed-arrays.js";
import { refuseShippingAnonymousRecord } from "../src/scatter/value-errors.js";

let travelsAsText: (type: string) => boolean;

beforeAll(async () => {
  const analyzer = await Analyzer.create({ keyColumns: new Map([["users", "tenant_id"]]) });
  const merge = analyzer.analyze("SELECT id FROM users ORDER BY name").merge;
  if (merge.tier !== "ordered") throw new Error(`expected an ordered plan, got ${merge.tier}`);
  // The home statement @geo/sql renders casts a column back from text when it binds it as text[].
  travelsAsText = (type) => merge.homeFinish.render([type, "text"], ["id"]).includes("CAST(__geo_u.c0 AS");
});

describe("how shipped columns travel", () => {
  it("ships in binary exactly what the home statement reads from a binary array", () => {
    const names = [
      ...BINARY_SCALAR_NAMES,
      "numeric(12,2)",
      "bit(3)",
      "character varying(4)",
      "timestamp(3) with time zone",
      "interval day to second(2)",
      '"char"',
      "pg_catalog._char",
      "users",
      "pair[]",
      "mood",
      "int4range",
      "text[]",
      "bit(3)[]",
      "record",
    ];
    for (const name of names)
      expect({ name, text: shippingFormat(25, name) === 0 }).toEqual({ name, text: travelsAsText(name) });
  });

  it("ships every type created by users as text", () => {
    expect(shippingFormat(16384, "integer")).toBe(0);
    expect(shippingFormat(23, "integer")).toBe(1);
  });

  it("refuses anonymous records with 0A000 and a hint", () => {
    const error = refuseShippingAnonymousRecord("row");
    expect(error.code).toBe("0A000");
    expect(error.hint).toMatch(/composite type/);
  });
});
