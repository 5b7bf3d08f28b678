import { copyStatement, initSql } from "@geo/sql";
import { beforeAll, describe, expect, it } from "vitest";
import { copyFormatSpec } from "../src/copy/copy-format.js";
import { copyOutLine } from "../src/copy/copy-out-rows.js";

beforeAll(initSql);

function line(statement: string, values: readonly (string | null)[], forced: readonly number[] = []): string {
  const spec = copyFormatSpec(copyStatement(statement)!.options);
  const buffers = values.map((value) => (value === null ? null : Buffer.from(value)));
  return copyOutLine(buffers, spec, (column) => forced.includes(column)).toString();
}

describe("COPY TO rows", () => {
  it("escapes control characters, backslashes and the delimiter in text, NULL as \\N", () => {
    expect(line("COPY t TO STDOUT", ["a\tb", "c\nd\re", "back\\slash", null, "\b\f\v", "\u0001"])).toBe(
      "a\\tb\tc\\nd\\re\tback\\\\slash\t\\N\t\\b\\f\\v\t\u0001\n",
    );
    expect(line("COPY t TO STDOUT (DELIMITER '|', NULL '')", ["x|y", null, "z"])).toBe("x\\|y||z\n");
  });

  it("quotes CSV values that hold the delimiter, quotes or line ends, or equal the NULL marker", () => {
    expect(line("COPY t TO STDOUT (FORMAT csv)", ["plain", "a,b", 'say "hi"', "two\nlines", "", null])).toBe(
      'plain,"a,b","say ""hi""","two\nlines","",\n',
    );
    expect(line("COPY t TO STDOUT (FORMAT csv, NULL 'nil')", ["nil", null, ""])).toBe('"nil",nil,\n');
    expect(line("COPY t TO STDOUT (FORMAT csv)", ["\\."])).toBe('"\\."\n');
    expect(line("COPY t TO STDOUT (FORMAT csv)", ["\\.", "x"])).toBe("\\.,x\n");
  });

  it("writes QUOTE, ESCAPE, DELIMITER and FORCE_QUOTE as PostgreSQL does", () => {
    expect(
      line("COPY t TO STDOUT (FORMAT csv, QUOTE '''', ESCAPE '\\', DELIMITER ';')", ["it's", "a;b", "c\\d"]),
    ).toBe("'it\\'s';'a;b';c\\d\n");
    expect(line("COPY t TO STDOUT (FORMAT csv)", ["a", "b", null], [0, 2])).toBe('"a",b,\n');
  });
});
