import { describe, expect, it } from "vitest";
import {
  decodeErrorResponse,
  decodeNoticeResponse,
  encodeErrorResponse,
  encodeNoticeResponse,
  FaultReason,
  isProtocolFault,
  isSqlStateCode,
  PgError,
  protocolFault,
  protocolViolation,
  SqlState,
  SqlStateClass,
} from "../src/index.js";
import { bodyOf, cstr, i8, msg } from "./support/bytes.js";

const full = new PgError({
  code: SqlState.feature_not_supported,
  message: "join across regions on a non-key column",
  severity: "ERROR",
  detail: "users is partitioned by id; orders by region",
  hint: "Join on the partition key.",
  position: 42,
  internalPosition: 7,
  internalQuery: "SELECT 1",
  where: "SQL function f",
  schema: "public",
  table: "users",
  column: "email",
  dataType: "text",
  constraint: "users_email_key",
  file: "planner.ts",
  line: 120,
  routine: "plan",
});

describe("PgError", () => {
  it("travels through an ErrorResponse with every field", () => {
    const decoded = decodeErrorResponse(bodyOf(encodeErrorResponse(full)));
    if (isProtocolFault(decoded)) throw new Error(decoded.message);
    const back = PgError.fromFields(decoded.fields);
    expect({ ...back, message: back.message }).toEqual({ ...full, message: full.message });
    expect(back).toBeInstanceOf(Error);
  });

  it("is sent with S, V, C and M first, as PostgreSQL does", () => {
    const bytes = encodeErrorResponse(
      new PgError({ code: SqlState.protocol_violation, message: "bad", severity: "FATAL" }),
    );
    expect(bytes).toEqual(
      msg(
        "E",
        i8(0x53),
        cstr("FATAL"),
        i8(0x56),
        cstr("FATAL"),
        i8(0x43),
        cstr("08P01"),
        i8(0x4d),
        cstr("bad"),
        i8(0),
      ),
    );
  });

  it("travels as a NoticeResponse too", () => {
    const notice = new PgError({ code: SqlState.warning, message: "careful", severity: "WARNING" });
    const bytes = encodeNoticeResponse(notice);
    expect(bytes[0]).toBe(0x4e);
    const decoded = decodeNoticeResponse(bodyOf(bytes));
    if (isProtocolFault(decoded)) throw new Error(decoded.message);
    expect(PgError.fromFields(decoded.fields).severity).toBe("WARNING");
  });

  it("keeps a translated severity apart from the non-localized one", () => {
    const err = PgError.fromFields({
      severity: "FEHLER",
      severityNonLocalized: "ERROR",
      code: "42P01",
      message: "x",
    });
    expect(err.severity).toBe("ERROR");
    expect(err.localizedSeverity).toBe("FEHLER");
    expect(err.toFields().severity).toBe("FEHLER");
  });

  it("fills a missing code and severity and drops numeric fields that are not numbers", () => {
    const err = PgError.fromFields({ message: "m", position: "abc", line: "12" });
    expect(err.code).toBe("XX000");
    expect(err.severity).toBe("ERROR");
    expect(err.position).toBeUndefined();
    expect(err.line).toBe(12);
  });

  it("carries an unknown SQLSTATE from a newer server unchanged", () => {
    expect(PgError.fromFields({ code: "ZZ999", message: "m" }).code).toBe("ZZ999");
  });

  it("knows FATAL and PANIC end the session", () => {
    expect(new PgError({ code: SqlState.admin_shutdown, message: "m", severity: "FATAL" }).isFatal).toBe(
      true,
    );
    expect(full.isFatal).toBe(false);
  });

  it("keeps a cause", () => {
    const cause = new Error("socket closed");
    expect(new PgError({ code: SqlState.connection_failure, message: "m", cause }).cause).toBe(cause);
  });
});

describe("the SQLSTATE table", () => {
  it("holds every PostgreSQL code by condition name", () => {
    expect(SqlState.feature_not_supported).toBe("0A000");
    expect(SqlState.serialization_failure).toBe("40001");
    expect(SqlState.unique_violation).toBe("23505");
    expect(SqlState.invalid_password).toBe("28P01");
    expect(SqlState.query_canceled).toBe("57014");
    expect(Object.keys(SqlState).length).toBeGreaterThanOrEqual(260);
    expect(SqlStateClass["0A"]).toBe("Feature Not Supported");
  });

  it("gives both names of a condition the standard reuses", () => {
    expect(SqlState.warning_string_data_right_truncation).toBe("01004");
    expect(SqlState.string_data_right_truncation).toBe("22001");
  });

  it("tells known codes from unknown ones", () => {
    expect(isSqlStateCode("0A000")).toBe(true);
    expect(isSqlStateCode("0A00X")).toBe(false);
  });
});

describe("protocolViolation", () => {
  it("turns a fault into a FATAL 08P01 with a hint", () => {
    const err = protocolViolation(protocolFault(FaultReason.lengthTooShort, "length 2"));
    expect(err.code).toBe("08P01");
    expect(err.isFatal).toBe(true);
    expect(err.message).toContain("length 2");
    expect(err.hint).toBeDefined();
  });
});
