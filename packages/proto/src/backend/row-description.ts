import { BackendCode } from "../codes.js";
import type { ProtocolFault } from "../fault.js";
import { encodeOne, type Fields, type FormatCode, isFormatCode } from "../message.js";
import { Reader } from "../reader.js";
import type { Writer } from "../writer.js";

/** One column of a result. */
export interface FieldDescription {
  readonly name: string;
  /** OID of the source table, 0 if the column is not a plain table column. */
  readonly tableOid: number;
  /** Attribute number within that table, 0 otherwise. */
  readonly columnAttr: number;
  readonly typeOid: number;
  /** pg_type.typlen: negative for variable width. */
  readonly typeSize: number;
  /** pg_attribute.atttypmod: -1 when it does not apply. */
  readonly typeModifier: number;
  /** Always 0 in a Describe of a statement (formats are not yet known). */
  readonly format: FormatCode;
}

/** The columns of the rows that follow. */
export interface RowDescription {
  readonly type: "RowDescription";
  readonly fields: readonly FieldDescription[];
}

export function decodeRowDescription(payload: Buffer): RowDescription | ProtocolFault {
  const r = new Reader(payload, "RowDescription");
  const count = r.u16("field count");
  const fields: FieldDescription[] = [];
  for (let i = 0; i < count && r.fault === null; i++) {
    const name = r.cstring("field name");
    const tableOid = r.u32("table oid");
    const columnAttr = r.i16("column number");
    const typeOid = r.u32("type oid");
    const typeSize = r.i16("type size");
    const typeModifier = r.i32("type modifier");
    const format = r.i16("format code");
    if (!isFormatCode(format)) r.invalid(`format code ${format}`);
    fields.push({
      name,
      tableOid,
      columnAttr,
      typeOid,
      typeSize,
      typeModifier,
      format: format as FormatCode,
    });
  }
  return r.result({ type: "RowDescription", fields });
}

export function writeRowDescription(w: Writer, msg: Fields<RowDescription>): Writer {
  w.begin(BackendCode.RowDescription).u16(msg.fields.length);
  for (const f of msg.fields) {
    w.cstring(f.name)
      .u32(f.tableOid)
      .i16(f.columnAttr)
      .u32(f.typeOid)
      .i16(f.typeSize)
      .i32(f.typeModifier)
      .i16(f.format);
  }
  return w.end();
}

export function encodeRowDescription(msg: Fields<RowDescription>): Buffer {
  return encodeOne((w) => writeRowDescription(w, msg));
}
