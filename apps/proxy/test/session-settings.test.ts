import type { Analysis, SessionEffect } from "@geo/sql";
import { describe, expect, it } from "vitest";
import { decodeBinaryParam } from "../src/session/binary-params.js";
import { parseOptions, SessionSettings, searchPathSchemas } from "../src/session/session-settings.js";
import { quoteLiteral, settingName } from "../src/session/settings/quote.js";
import { changedParameters, resetToStartup } from "../src/session/settings/reset-to-startup.js";
import { startingSearchPath } from "../src/session/startup-settings.js";

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

  it("quotes each part of a name that is a keyword or not a bare identifier, and literals with backslashes", () => {
    expect(settingName("some.var")).toBe(`"some".var`);
    expect(settingName("DateStyle")).toBe("DateStyle");
    expect(settingName("my.Select")).toBe(`my."Select"`);
    expect(settingName("session.x")).toBe(`"session".x`);
    expect(settingName("a-b.c")).toBe(`"a-b".c`);
    expect(settingName("x..y")).toBe(`"x..y"`);
    expect(quoteLiteral("it's")).toBe(`'it''s'`);
    expect(quoteLiteral("c:\\dir")).toBe(`E'c:\\\\dir'`);
    const settings = SessionSettings.fromStartup({ options: "-c some.var=x" });
    expect(settings.replayFor(new Map())).toBe(`SET application_name TO ''; SET "some".var TO 'x'`);
    settings.record(analysis({ kind: "reset", local: false, name: "some.var" }));
    expect(settings.replayFor(new Map([["other.x", "SET other.x = 1"]]))).toBe(
      `RESET other.x; SET application_name TO ''; SET "some".var TO 'x'`,
    );
  });

  it("forgets a SET ROLE when SESSION AUTHORIZATION is set or reset, as PostgreSQL ends it then", () => {
    const settings = new SessionSettings();
    const set = (name: string, text: string) =>
      settings.record(analysis({ kind: "set", local: false, name }, text));
    set("session_authorization", "SET SESSION AUTHORIZATION regress_u8");
    set("role", "SET ROLE regress_u9");
    expect(settings.replayFor(new Map())).toBe("SET SESSION AUTHORIZATION regress_u8; SET ROLE regress_u9");
    settings.record(
      analysis({ kind: "reset", local: false, name: "session_authorization" }, "RESET SESSION AUTHORIZATION"),
    );
    expect(settings.replayFor(new Map())).toBeNull();
    set("role", "SET ROLE regress_u9");
    set("session_authorization", "SET SESSION AUTHORIZATION regress_u10");
    expect(settings.replayFor(new Map())).toBe("SET SESSION AUTHORIZATION regress_u10");
  });

  it("resets another client's SESSION AUTHORIZATION and ROLE before any other setting", () => {
    const applied = new Map([
      ["lo_compat_privileges", "SET lo_compat_privileges = true"],
      ["session_authorization", "SET SESSION AUTHORIZATION regress_u4"],
      ["role", "SET ROLE regress_u5"],
    ]);
    // RESET lo_compat_privileges needs the login role's rights: it must not run as regress_u4.
    expect(new SessionSettings().replayFor(applied)).toBe(
      `RESET session_authorization; RESET "role"; RESET lo_compat_privileges`,
    );
  });

  it("replays settings in the order of their latest change", () => {
    const settings = SessionSettings.fromStartup({ application_name: "a" });
    settings.record(
      analysis(
        { kind: "set", local: false, name: "standard_conforming_strings" },
        "SET standard_conforming_strings = off",
      ),
    );
    settings.record(
      analysis({ kind: "set", local: false, name: "application_name" }, "SET application_name = 'b'"),
    );
    expect(settings.replayFor(new Map())).toBe(
      "SET standard_conforming_strings = off; SET application_name = 'b'",
    );
  });
});

describe("RESET and the startup values", () => {
  it("gives a client without application_name '' rather than the proxy's own", () => {
    expect(new Map(SessionSettings.fromStartup({ user: "u" }).entries())).toEqual(
      new Map([["application_name", "SET application_name TO ''"]]),
    );
  });

  it("returns RESET name, RESET ALL and DISCARD ALL to the startup values", () => {
    const settings = SessionSettings.fromStartup({ application_name: "app", options: "-c TimeZone=UTC" });
    settings.record(analysis({ kind: "set", local: false, name: "TimeZone" }, "SET TimeZone = 'Asia/Tokyo'"));
    settings.record(analysis({ kind: "set", local: false, name: "search_path" }, "SET search_path = x"));
    settings.record(analysis({ kind: "reset", local: false, name: "timezone" }));
    expect(new Map(settings.entries()).get("timezone")).toBe("SET TimeZone TO 'UTC'");
    settings.record(analysis({ kind: "reset", local: false }));
    expect([...settings.entries()]).toEqual([
      ["application_name", "SET application_name TO 'app'"],
      ["timezone", "SET TimeZone TO 'UTC'"],
    ]);
    settings.record(analysis({ kind: "set", local: false, name: "TimeZone" }, "SET TimeZone = 'Asia/Tokyo'"));
    settings.record(analysis({ kind: "discard", local: false, value: "all" }));
    expect(new Map(settings.entries()).get("timezone")).toBe("SET TimeZone TO 'UTC'");
  });

  it("sends RESET of a startup setting as its startup SET, and other RESETs as written", () => {
    const settings = SessionSettings.fromStartup({ application_name: "app" });
    expect(
      resetToStartup(settings, analysis({ kind: "reset", local: false, name: "Application_Name" }), false),
    ).toEqual({
      statements: ["SET application_name TO 'app'"],
      tag: "RESET",
    });
    expect(
      resetToStartup(settings, analysis({ kind: "reset", local: false, name: "TimeZone" }), false),
    ).toBeNull();
    expect(resetToStartup(settings, analysis({ kind: "reset", local: false }), true)).toEqual({
      statements: ["RESET ALL", "SET application_name TO 'app'"],
      tag: "RESET",
    });
    expect(
      resetToStartup(settings, analysis({ kind: "discard", local: false, value: "all" }), false),
    ).toEqual({
      statements: ["DISCARD ALL", "SET application_name TO 'app'"],
      tag: "DISCARD ALL",
    });
    expect(
      resetToStartup(settings, analysis({ kind: "discard", local: false, value: "all" }), true),
    ).toBeNull();
  });

  it("reports what changed, in the order PostgreSQL sends ParameterStatus", () => {
    const before = new Map([
      ["TimeZone", "UTC"],
      ["application_name", "a"],
      ["DateStyle", "ISO, MDY"],
    ]);
    const after = new Map([
      ["TimeZone", "Asia/Tokyo"],
      ["application_name", "b"],
      ["DateStyle", "ISO, MDY"],
    ]);
    expect(changedParameters(before, after)).toEqual([
      ["application_name", "b"],
      ["TimeZone", "Asia/Tokyo"],
    ]);
  });
});

function analysis(effect: SessionEffect, text = ""): Analysis {
  return { text, sessionEffects: [effect] } as unknown as Analysis;
}

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

describe("searchPathSchemas", () => {
  it.each([
    ["SET search_path = app, public", ["app", "public"]],
    ['SET SESSION search_path TO "App", "$user"', ["App", "$user"]],
    // In SET a quoted literal is one schema, as the server quotes it.
    ["SET search_path TO 'a,b'", ["a,b"]],
    // A startup value or set_config gives the setting's string, a list.
    ["SELECT pg_catalog.set_config('search_path', 'app, public', false)", ["app", "public"]],
  ])("%s", (statement, schemas) => {
    expect(searchPathSchemas(statement)).toEqual(schemas);
  });

  it("replays a startup search_path as the list it is", () => {
    const settings = SessionSettings.fromStartup({ options: "-c search_path=app,public" });
    expect(settings.searchPath()).toEqual(["app", "public"]);
  });
});

describe("the search_path a login starts with", () => {
  const reported = (value: string, userSchema: string) =>
    new Map([
      ["search_path", value],
      ["$user schema", userSchema],
    ]);

  it.each([
    ['"$user", public', "", undefined],
    ['"$user", public', "alice", ["alice", "public"]],
    ["public, app", "", undefined],
    ["app, public", "", ["app", "public"]],
    ['"App", public', "", ["App", "public"]],
    ["pg_catalog, public", "", undefined],
    ["app", "", ["app"]],
    ['"$user"', "", []],
  ])("%s with $user schema %j -> %j", (value, userSchema, expected) => {
    expect(startingSearchPath(reported(value, userSchema))).toEqual(expected);
  });

  it("assumes the planner's default when the check could not say", () => {
    expect(startingSearchPath(new Map())).toBeUndefined();
  });

  it("is what the session resolves names under until the client sets its own, and after RESET", () => {
    const settings = SessionSettings.fromStartup({ user: "u" });
    settings.startingSearchPath = ["app", "public"];
    expect(settings.searchPath()).toEqual(["app", "public"]);
    expect(settings.snapshot().searchPath()).toEqual(["app", "public"]);
  });
});
