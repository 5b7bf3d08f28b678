import { copyStatement, initSql } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { binaryKeyDecoder } from "../src/copy/binary-key.js";
import { BinaryRows } from "../src/copy/binary-rows.js";
import { copyFormatSpec } from "../src/copy/copy-format.js";
import { CsvLines } from "../src/copy/csv-lines.js";
import { LineReader, TextLines } from "../src/copy/line-reader.js";
import type { RowFault, RowReader } from "../src/copy/row-reader.js";

beforeAll(initSql);

interface Read {
  readonly prefix: string[];
  readonly rows: { readonly bytes: string; readonly key: string | null | undefined; readonly line: number }[];
  readonly fault: RowFault | null;
  readonly finished: boolean;
}

type Make = (read: Read) => RowReader;

/** Reads `input` split into the given pieces, each piece handed over as its own message. */
function readPieces(make: Make, pieces: readonly Buffer[]): Read {
  const read: Read = { prefix: [], rows: [], fault: null, finished: false };
  const reader = make(read);
  let fault: RowFault | null = null;
  for (const piece of pieces) {
    // Views into a buffer that is overwritten after each push, as the framer's are.
    const scratch = Buffer.from(piece);
    fault = reader.push(scratch);
    scratch.fill(0x21);
    if (fault !== null) break;
  }
  fault ??= reader.end();
  return { ...read, fault, finished: reader.finished };
}

/** Every split of `input` in two and in three pieces reads as the whole does. */
function expectEverySplit(make: Make, input: Buffer): Read {
  const whole = readPieces(make, [input]);
  for (let a = 0; a <= input.length; a++) {
    expect(readPieces(make, [input.subarray(0, a), input.subarray(a)]), `split at ${a}`).toEqual(whole);
    for (let b = a; b <= input.length; b += 3) {
      const three = [input.subarray(0, a), input.subarray(a, b), input.subarray(b)];
      expect(readPieces(make, three), `split at ${a}, ${b}`).toEqual(whole);
    }
  }
  const bytes = [...input].map((byte) => Buffer.from([byte]));
  expect(readPieces(make, bytes), "one byte per message").toEqual(whole);
  return whole;
}

function lineReader(statement: string, keyIndex: number | null, keyName = "k"): Make {
  const spec = copyFormatSpec(copyStatement(statement)!.options);
  return (read) => {
    const format = spec.format === "csv" ? new CsvLines(spec, keyName) : new TextLines(spec);
    return new LineReader(
      spec,
      format,
      {
        prefix: (bytes) => read.prefix.push(bytes.toString("utf8")),
        row: (bytes, key, line) => read.rows.push({ bytes: bytes.toString("utf8"), key, line }),
      },
      keyIndex === null ? null : { index: keyIndex, name: keyName },
      1 << 20,
    );
  };
}

describe("text format rows", () => {
  it("cuts rows at unescaped line feeds and reads the key field unescaped", () => {
    const input = Buffer.from("a\\tb\t1\tx\nc\\\nd\t2\t\\N\n\\N\t3\ty\r\ne\\x41\\101\\\\\t4\tz");
    const read = expectEverySplit(lineReader("COPY t FROM STDIN", 0), input);
    expect(read.rows.map((row) => row.key)).toEqual(["a\tb", "c\nd", null, "eAA\\"]);
    expect(read.rows.map((row) => row.bytes)).toEqual([
      "a\\tb\t1\tx\n",
      "c\\\nd\t2\t\\N\n",
      "\\N\t3\ty\r\n",
      "e\\x41\\101\\\\\t4\tz",
    ]);
    expect(read.rows.map((row) => row.line)).toEqual([1, 2, 3, 4]);
    expect(read.fault).toBeNull();
  });

  it("reads a later key column, with another delimiter and NULL marker", () => {
    const input = Buffer.from("x|7|a\ny|NULL|b\nz|\\|9|c\n");
    const read = expectEverySplit(
      lineReader("COPY t FROM STDIN WITH (DELIMITER '|', NULL 'NULL')", 1),
      input,
    );
    // An escaped delimiter is data: the key of the third row is "|9".
    expect(read.rows.map((row) => row.key)).toEqual(["7", null, "|9"]);
  });

  it("sends the header to every region, stops at the end marker, names the line of a short row", () => {
    const input = Buffer.from("id\tname\n1\ta\n\\.\n2\tb\n");
    const read = expectEverySplit(lineReader("COPY t FROM STDIN WITH (HEADER)", 1), input);
    expect(read.prefix).toEqual(["id\tname\n"]);
    expect(read.rows.map((row) => row.key)).toEqual(["a"]);
    expect(read.finished).toBe(true);

    const short = expectEverySplit(
      lineReader("COPY t FROM STDIN", 2),
      Buffer.from("1\ta\tb\n2\tc\n3\td\te\n"),
    );
    expect(short.fault).toEqual({ line: 2, reason: "format", message: 'missing data for column "k"' });
    expect(short.rows.map((row) => row.key)).toEqual(["b"]);
  });
});

describe("CSV rows", () => {
  it("keeps delimiters, quotes and line ends inside quoted fields", () => {
    const input = Buffer.from('"a,b",1\n"c\nd","x""y"\r\n"",2\n,3\n"e""",4');
    const read = expectEverySplit(lineReader("COPY t FROM STDIN WITH (FORMAT csv)", 0), input);
    expect(read.rows.map((row) => row.key)).toEqual(["a,b", "c\nd", "", null, 'e"']);
    expect(read.rows.map((row) => row.bytes)).toEqual([
      '"a,b",1\n',
      '"c\nd","x""y"\r\n',
      '"",2\n',
      ",3\n",
      '"e""",4',
    ]);
  });

  it("reads ESCAPE, QUOTE, DELIMITER, NULL, HEADER and FORCE_NULL as PostgreSQL does", () => {
    const statement =
      "COPY t FROM STDIN WITH (FORMAT csv, HEADER, QUOTE '''', ESCAPE '\\', DELIMITER ';', NULL 'nil', FORCE_NULL (k))";
    const input = Buffer.from("k;v\n'a\\'b';1\n'c\\\\';2\nnil;3\n'nil';4\n'x;\ny';5\n");
    const read = expectEverySplit(lineReader(statement, 0), input);
    expect(read.prefix).toEqual(["k;v\n"]);
    expect(read.rows.map((row) => row.key)).toEqual(["a'b", "c\\", null, null, "x;\ny"]);
    expect(read.rows.map((row) => row.line)).toEqual([2, 3, 4, 5, 6]);
    const without = expectEverySplit(lineReader("COPY t FROM STDIN WITH (FORMAT csv, NULL 'nil')", 0), input);
    expect(without.rows.map((row) => row.key)).toEqual([
      "k;v",
      "'a\\'b';1",
      "'c\\\\';2",
      "nil;3",
      "'nil';4",
      "'x;",
      "y';5",
    ]);
  });

  it("reads an unquoted NULL marker as text in a FORCE_NOT_NULL column", () => {
    const input = Buffer.from(',1\n"",2\n');
    const read = expectEverySplit(
      lineReader("COPY t FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL (k))", 0),
      input,
    );
    expect(read.rows.map((row) => row.key)).toEqual(["", ""]);
  });

  it("names the line of an unterminated quote and of a missing key field", () => {
    const open = expectEverySplit(lineReader("COPY t FROM STDIN (FORMAT csv)", 1), Buffer.from('1,a\n2,"b'));
    expect(open.fault).toEqual({ line: 2, reason: "format", message: "unterminated CSV quoted field" });
    const missing = expectEverySplit(
      lineReader("COPY t FROM STDIN (FORMAT csv)", 1),
      Buffer.from('1,a\n"2,b"\n'),
    );
    expect(missing.fault?.line).toBe(2);
  });
});

/** A binary COPY stream built by hand: int32 key, text value. */
function binaryStream(rows: readonly (readonly (Buffer | null)[])[], trailer = true): Buffer {
  const parts: Buffer[] = [
    Buffer.from("PGCOPY\n\xff\r\n\0", "latin1"),
    Buffer.alloc(4),
    Buffer.from([0, 0, 0, 2, 9, 9]),
  ];
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    for (const field of row) {
      const length = Buffer.alloc(4);
      length.writeInt32BE(field === null ? -1 : field.length);
      parts.push(length);
      if (field !== null) parts.push(field);
    }
  }
  if (trailer) parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

function int4(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeInt32BE(value);
  return out;
}

function binaryReader(oid: number, index: number): Make {
  return (read) =>
    new BinaryRows(
      {
        prefix: (bytes) => read.prefix.push(bytes.toString("hex")),
        row: (bytes, key, line) => read.rows.push({ bytes: bytes.toString("hex"), key, line }),
      },
      { index, name: "k" },
      binaryKeyDecoder(oid)!,
      1 << 20,
    );
}

describe("binary rows", () => {
  it("cuts tuples whatever the messages' boundaries and decodes the key for its type", () => {
    const input = binaryStream([
      [Buffer.from("a"), int4(7)],
      [Buffer.from(""), int4(-3)],
      [null, null],
    ]);
    const read = expectEverySplit(binaryReader(23, 1), input);
    expect(read.prefix).toHaveLength(1);
    expect(read.rows.map((row) => row.key)).toEqual(["7", "-3", null]);
    expect(read.finished).toBe(true);
    const text = expectEverySplit(binaryReader(25, 0), input);
    expect(text.rows.map((row) => row.key)).toEqual(["a", "", null]);
  });

  it("reads int2, int8 and uuid keys", () => {
    const int2 = Buffer.from([0xff, 0xfe]);
    const int8 = Buffer.from([0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const uuid = Buffer.from("a0eebc999c0b4ef8bb6d6bb9bd380a11", "hex");
    expect(binaryKeyDecoder(21)!(int2, 0, 2)).toBe("-2");
    expect(binaryKeyDecoder(20)!(int8, 0, 8)).toBe("9223372036854775807");
    expect(binaryKeyDecoder(2950)!(uuid, 0, 16)).toBe("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    expect(binaryKeyDecoder(23)!(int2, 0, 2)).toBeNull();
    expect(binaryKeyDecoder(1700)).toBeNull();
  });

  it("faults on a bad signature, a short tuple and data cut short", () => {
    const bad = readPieces(binaryReader(23, 0), [
      Buffer.from("PGCOPX\n\xff\r\n\0\0\0\0\0\0\0\0\0", "latin1"),
    ]);
    expect(bad.fault?.reason).toBe("format");
    const short = expectEverySplit(binaryReader(23, 1), binaryStream([[int4(1), int4(2)], [int4(3)]]));
    expect(short.fault).toEqual({ line: 2, reason: "format", message: 'missing data for column "k"' });
    const cut = binaryStream([[int4(1)]], false);
    const truncated = readPieces(binaryReader(23, 0), [cut.subarray(0, cut.length - 2)]);
    expect(truncated.fault?.message).toBe("unexpected EOF in COPY data");
  });
});
