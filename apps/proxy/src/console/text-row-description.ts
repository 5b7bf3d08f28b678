import { encodeRowDescription } from "@geo/proto";

/** A RowDescription of text columns, as PostgreSQL describes `text`: every console answer is one. */
export function textRowDescription(columns: readonly string[]): Buffer {
  return encodeRowDescription({
    fields: columns.map((name) => ({
      name,
      tableOid: 0,
      columnAttr: 0,
      typeOid: 25,
      typeSize: -1,
      typeModifier: -1,
      format: 0,
    })),
  });
}
