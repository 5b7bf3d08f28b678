import { describe, expect, it } from "vitest";
import {
  BindView,
  commandRowCount,
  commandTag,
  DataRowCursor,
  ErrorFieldCode,
  errorField,
  isProtocolFault,
  Messages,
  readyForQueryStatus,
  Writer,
  writeQuery,
  writeSync,
} from "../src/index.js";
import { bodyOf, cstr, i8, i16, i32, msg, raw } from "./support/bytes.js";

describe("BindView", () => {
  const bind = msg(
    "B",
    cstr("portal"),
    cstr("stmt"),
    i16(3),
    i16(0),
    i16(1),
    i16(1),
    i16(3),
    i32(5),
    raw("alice"),
    i32(-1),
    i32(4),
    i32(7),
    i16(1),
    i16(1),
  );

  it("reads names, formats and parameter values in place", () => {
    const view = BindView.from(bodyOf(bind));
    if (isProtocolFault(view)) throw new Error(view.message);
    expect(view.portal).toBe("portal");
    expect(view.statement).toBe("stmt");
    expect(view.paramCount).toBe(3);
    expect(view.text(0)).toBe("alice");
    expect(view.format(0)).toBe(0);
    expect(view.isNull(1)).toBe(true);
    expect(view.value(1)).toBeNull();
    expect(view.length(1)).toBe(-1);
    expect(view.format(1)).toBe(1);
    expect(view.value(2)?.readInt32BE(0)).toBe(7);
    expect(view.resultFormatCount).toBe(1);
    expect(view.resultFormat(5)).toBe(1);
  });

  it("returns views into the message, not copies", () => {
    const payload = Buffer.from(bodyOf(bind));
    const view = BindView.from(payload);
    if (isProtocolFault(view)) throw new Error(view.message);
    payload[payload.indexOf("alice")] = 0x41;
    expect(view.text(0)).toBe("Alice");
  });

  it("applies a single format code to every parameter and none as text", () => {
    const one = BindView.from(
      bodyOf(
        msg("B", cstr(""), cstr(""), i16(1), i16(1), i16(2), i32(1), raw("a"), i32(1), raw("b"), i16(0)),
      ),
    );
    const none = BindView.from(
      bodyOf(msg("B", cstr(""), cstr(""), i16(0), i16(1), i32(1), raw("a"), i16(0))),
    );
    if (isProtocolFault(one) || isProtocolFault(none)) throw new Error("fault");
    expect([one.format(0), one.format(1)]).toEqual([1, 1]);
    expect(none.format(0)).toBe(0);
    expect(none.resultFormat(0)).toBe(0);
  });

  it("refuses a format count that is neither 0, 1 nor the parameter count", () => {
    const bad = msg(
      "B",
      cstr(""),
      cstr(""),
      i16(2),
      i16(0),
      i16(0),
      i16(3),
      i32(-1),
      i32(-1),
      i32(-1),
      i16(0),
    );
    expect(isProtocolFault(BindView.from(bodyOf(bad)))).toBe(true);
  });

  it("refuses format codes other than 0 and 1", () => {
    const bad = msg("B", cstr(""), cstr(""), i16(1), i16(2), i16(0), i16(0));
    expect(isProtocolFault(BindView.from(bodyOf(bad)))).toBe(true);
  });

  it("refuses a parameter whose length runs past the body", () => {
    const bad = msg("B", cstr(""), cstr(""), i16(0), i16(1), i32(100), raw("short"), i16(0));
    expect(isProtocolFault(BindView.from(bodyOf(bad)))).toBe(true);
  });
});

describe("DataRowCursor", () => {
  const row = bodyOf(msg("D", i16(4), i32(3), raw("abc"), i32(-1), i32(0), i32(2), raw("é")));

  it("walks every column by offset and length", () => {
    const cursor = new DataRowCursor();
    expect(cursor.reset(row)).toBeNull();
    const seen: (string | null)[] = [];
    while (cursor.next()) seen.push(cursor.text());
    expect(seen).toEqual(["abc", null, "", "é"]);
    expect(cursor.count).toBe(4);
    expect(cursor.fault).toBeNull();
  });

  it("locates values inside the payload without copying", () => {
    const cursor = new DataRowCursor();
    cursor.reset(row);
    cursor.next();
    expect(row.subarray(cursor.offset, cursor.offset + cursor.length).toString()).toBe("abc");
    expect(cursor.value()?.buffer).toBe(row.buffer);
    cursor.next();
    expect(cursor.isNull).toBe(true);
  });

  it("can be reset onto the next row", () => {
    const cursor = new DataRowCursor();
    cursor.reset(row);
    while (cursor.next());
    cursor.reset(bodyOf(msg("D", i16(1), i32(1), raw("z"))));
    expect(cursor.next()).toBe(true);
    expect(cursor.text()).toBe("z");
    expect(cursor.next()).toBe(false);
  });

  it("stops with a fault on a value running past the body", () => {
    const cursor = new DataRowCursor();
    cursor.reset(bodyOf(msg("D", i16(2), i32(1), raw("a"), i32(50), raw("b"))));
    expect(cursor.next()).toBe(true);
    expect(cursor.next()).toBe(false);
    expect(cursor.fault?.reason).toBe("truncated");
  });

  it("reports bytes after the last column", () => {
    const cursor = new DataRowCursor();
    cursor.reset(bodyOf(msg("D", i16(1), i32(1), raw("a"), raw("junk"))));
    while (cursor.next());
    expect(cursor.fault?.reason).toBe("trailing-bytes");
  });

  it("faults on a body too short for the column count", () => {
    expect(new DataRowCursor().reset(Buffer.from([0]))?.reason).toBe("truncated");
  });
});

describe("peeks", () => {
  it("reads the ReadyForQuery status from the frame", () => {
    for (const status of ["I", "T", "E"] as const) {
      const bytes = msg("Z", i8(status.charCodeAt(0)));
      expect(readyForQueryStatus({ code: 0x5a, payload: bodyOf(bytes), bytes })).toBe(status);
    }
    const other = msg("C", cstr("I"));
    expect(readyForQueryStatus({ code: 0x43, payload: bodyOf(other), bytes: other })).toBeNull();
    const bad = msg("Z", i8(0x51));
    expect(readyForQueryStatus({ code: 0x5a, payload: bodyOf(bad), bytes: bad })).toBeNull();
  });

  it("reads the command tag and its row count", () => {
    expect(commandTag(bodyOf(msg("C", cstr("UPDATE 12"))))).toBe("UPDATE 12");
    expect(commandRowCount(bodyOf(msg("C", cstr("INSERT 0 3"))))).toBe(3);
    expect(commandRowCount(bodyOf(msg("C", cstr("SELECT 1200"))))).toBe(1200);
    expect(commandRowCount(bodyOf(msg("C", cstr("BEGIN"))))).toBeNull();
    expect(commandRowCount(bodyOf(msg("C", cstr("42"))))).toBeNull();
    expect(commandTag(Buffer.from("no terminator"))).toBeNull();
  });

  it("finds one field of an ErrorResponse without decoding the rest", () => {
    const body = bodyOf(
      msg("E", i8(0x53), cstr("ERROR"), i8(0x43), cstr("40001"), i8(0x4d), cstr("conflict"), i8(0)),
    );
    expect(errorField(body, ErrorFieldCode.code)).toBe("40001");
    expect(errorField(body, ErrorFieldCode.message)).toBe("conflict");
    expect(errorField(body, ErrorFieldCode.hint)).toBeNull();
    expect(errorField(Buffer.from([0x43, 0x34]), ErrorFieldCode.code)).toBeNull();
  });
});

describe("constant messages", () => {
  it("hold the documented bytes", () => {
    expect(Messages.sync).toEqual(msg("S"));
    expect(Messages.flush).toEqual(msg("H"));
    expect(Messages.terminate).toEqual(msg("X"));
    expect(Messages.copyDone).toEqual(msg("c"));
    expect(Messages.readyForQueryIdle).toEqual(msg("Z", i8(0x49)));
    expect(Messages.readyForQueryInTransaction).toEqual(msg("Z", i8(0x54)));
    expect(Messages.readyForQueryFailed).toEqual(msg("Z", i8(0x45)));
    expect(Messages.parseComplete).toEqual(msg("1"));
    expect(Messages.bindComplete).toEqual(msg("2"));
    expect(Messages.closeComplete).toEqual(msg("3"));
    expect(Messages.noData).toEqual(msg("n"));
    expect(Messages.portalSuspended).toEqual(msg("s"));
    expect(Messages.emptyQueryResponse).toEqual(msg("I"));
    expect(Messages.authenticationOk).toEqual(msg("R", i32(0)));
    expect(Messages.authenticationCleartextPassword).toEqual(msg("R", i32(3)));
    expect(Messages.authenticationSaslScram).toEqual(msg("R", i32(10), cstr("SCRAM-SHA-256"), i8(0)));
    expect([Messages.sslAccepted, Messages.sslRefused, Messages.gssEncryptionAccepted].map(String)).toEqual([
      "S",
      "N",
      "G",
    ]);
  });
});

describe("Writer", () => {
  it("batches several messages, patching each length, and is reusable after flush", () => {
    const w = new Writer(8);
    writeQuery(w, { sql: "SELECT 1" });
    writeSync(w);
    expect(w.flush()).toEqual(Buffer.concat([msg("Q", cstr("SELECT 1")), msg("S")]));
    expect(w.length).toBe(0);
    writeQuery(w, { sql: "x".repeat(5000) });
    expect(w.flushView()).toEqual(msg("Q", cstr("x".repeat(5000))));
  });

  it("gives flush() a copy that later writes do not change", () => {
    const w = new Writer(64);
    writeQuery(w, { sql: "a" });
    const first = w.flush();
    writeQuery(w, { sql: "b" });
    expect(first).toEqual(msg("Q", cstr("a")));
  });
});
