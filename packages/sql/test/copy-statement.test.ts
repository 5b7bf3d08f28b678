import { beforeAll, describe, expect, it } from "vitest";
import { copyStatement, initSql } from "../src/index.js";

beforeAll(initSql);

describe("copyStatement", () => {
  it("reads the table, column list and every data option of COPY FROM STDIN", () => {
    expect(
      copyStatement(
        `COPY s.t (a, "B") FROM STDIN WITH (FORMAT csv, HEADER, QUOTE '''', ESCAPE '\\', NULL 'x', DELIMITER ';', FORCE_NULL (a), FORCE_NOT_NULL *)`,
      ),
    ).toEqual({
      from: true,
      target: "stdio",
      table: { schema: "s", name: "t" },
      columns: ["a", "B"],
      filtered: false,
      options: {
        format: "csv",
        header: true,
        quote: "'",
        escape: "\\",
        null: "x",
        delimiter: ";",
        forceNull: ["a"],
        forceNotNull: "*",
      },
    });
  });

  it("reads the old option syntax and HEADER's boolean and MATCH forms", () => {
    expect(copyStatement("COPY t FROM STDIN CSV HEADER DELIMITER ','")?.options).toEqual({
      format: "csv",
      header: true,
      delimiter: ",",
    });
    expect(copyStatement("COPY t FROM STDIN WITH (HEADER match)")?.options.header).toBe("match");
    expect(copyStatement("COPY t FROM STDIN WITH (HEADER off)")?.options.header).toBe(false);
    expect(copyStatement("COPY t FROM STDIN WITH (HEADER 0)")?.options.header).toBe(false);
    expect(copyStatement("COPY t FROM STDIN")?.options).toEqual({ format: "text" });
  });

  it("tells server files, programs, queries and WHERE apart from STDIN", () => {
    expect(copyStatement("COPY t FROM '/tmp/x'")?.target).toBe("file");
    expect(copyStatement("COPY t FROM PROGRAM 'cat'")?.target).toBe("program");
    expect(copyStatement("COPY t FROM STDIN WHERE a > 1")?.filtered).toBe(true);
    const out = copyStatement("COPY (SELECT a FROM t ORDER BY a) TO STDOUT (FORMAT binary)");
    expect(out?.from).toBe(false);
    expect(out?.query).toBe("SELECT a FROM t ORDER BY a");
    expect(out?.options.format).toBe("binary");
    expect(copyStatement("SELECT 1")).toBeUndefined();
  });
});
