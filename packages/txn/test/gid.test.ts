import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GidFactory } from "../src/index.js";

const prefixArb = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,20}$/);

describe("GidFactory", () => {
  it("owns every id it issues, and they fit PostgreSQL's 200-byte gid limit", () => {
    fc.assert(
      fc.property(prefixArb, fc.integer({ min: 0, max: 2 ** 45 }), (prefix, now) => {
        const gids = new GidFactory(prefix);
        const gid = gids.next(now);
        expect(gids.owns(gid)).toBe(true);
        expect(gid.length).toBeLessThanOrEqual(200);
      }),
    );
  });

  it("never owns an id issued under another prefix, even one that extends its own", () => {
    fc.assert(
      fc.property(prefixArb, prefixArb, (a, b) => {
        fc.pre(a !== b);
        expect(new GidFactory(a).owns(new GidFactory(b).next())).toBe(false);
      }),
    );
    expect(new GidFactory("geo_a").owns(new GidFactory("geo_a_b").next())).toBe(false);
  });

  it("issues distinct ids in the same millisecond", () => {
    const gids = new GidFactory("geo");
    const issued = new Set(Array.from({ length: 1000 }, () => gids.next(42)));
    expect(issued.size).toBe(1000);
  });

  it("refuses a prefix that could not be told apart or quoted safely", () => {
    for (const bad of ["", "1geo", "geo-1", "geo'1", "a".repeat(101)]) {
      expect(() => new GidFactory(bad)).toThrow(expect.objectContaining({ code: "22023" }));
    }
  });
});
