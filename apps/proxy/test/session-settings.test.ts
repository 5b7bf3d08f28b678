import { describe, expect, it } from "vitest";
import { decodeBinaryParam } from "../src/session/binary-params.js";
import { parseOptions, SessionSettings } from "../src/session/session-settings.js";

describe("startup settings", () => {
  it("reads -c and -- pairs of the options parameter, with escaped spaces", () => {
    expect(
      parseOptions("-c search_path=app,public --statement-timeout=5s -cwork_mem=8MB -c app.note=a\\ b"),
    ).toEqual([
      ["search_path", "app,public"],
      ["statement_timeout", "5s"],
      ["work_mem", "8MB"],
      ["app.note", "a b"],
    ]);
  });

  it("turns startup parameters into settings, leaving out user, database and protocol options", () => {
    const settings = SessionSettings.fromStartup({
      user: "app",
      database: "shop",
      application_name: "it's",
      "_pq_.x": "1",
      options: "-c TimeZone=UTC",
    });
    expect(new Map(settings.entries())).toEqual(
      new Map([
        ["application_name", "SET application_name TO 'it''s'"],
        ["timezone", "SET TimeZone TO 'UTC'"],
      ]),
    );
  });
});

describe("settings replay", () => {
  it("sets what the connection lacks and resets what the client does not have", () => {
    const settings = SessionSettings.fromStartup({ application_name: "a", DateStyle: "ISO" });
    const applied = new Map([
      ["application_name", "SET application_name TO 'a'"],
      ["search_path", "SET search_path = x"],
    ]);
    expect(settings.replayFor(applied)).toBe("RESET search_path; SET DateStyle TO 'ISO'");
    settings.markApplied(applied);
    expect(settings.replayFor(applied)).toBeNull();
  });

  it("quotes setting names that are not plain identifiers", () => {
    const settings = new SessionSettings();
    settings.setValue("odd name", "v");
    expect(settings.replayFor(new Map())).toBe(`SET "odd name" TO 'v'`);
  });
});

describe("binary keys", () => {
  it("decodes the key types the router reads in binary, and nothing else", () => {
    const int8 = Buffer.alloc(8);
    int8.writeBigInt64BE(-42n);
    const int4 = Buffer.alloc(4);
    int4.writeInt32BE(7);
    expect(decodeBinaryParam(20, int8)).toBe("-42");
    expect(decodeBinaryParam(23, int4)).toBe("7");
    expect(decodeBinaryParam(21, Buffer.from([0xff, 0xfe]))).toBe("-2");
    expect(decodeBinaryParam(25, Buffer.from("bob"))).toBe("bob");
    expect(decodeBinaryParam(1042, Buffer.from("ab  "))).toBe("ab");
    expect(decodeBinaryParam(2950, Buffer.from("00112233445566778899aabbccddeeff", "hex"))).toBe(
      "00112233-4455-6677-8899-aabbccddeeff",
    );
    expect(decodeBinaryParam(23, Buffer.alloc(3))).toBeUndefined();
    expect(decodeBinaryParam(1700, Buffer.alloc(8))).toBeUndefined();
  });
});
