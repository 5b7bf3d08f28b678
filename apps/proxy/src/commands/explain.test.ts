import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXAMPLES } from "../console/example-context.js";
import { explainCommand } from "./explain.js";

const config = join(EXAMPLES, "geoproxy.toml");

describe("geoproxy explain", () => {
  it("takes a console command as the proxy does: handled by the session, not a SHOW for a region", async () => {
    for (const sql of ["SHOW REGIONS", "where is users alice", "SHOW STATS"]) {
      const text = await explainCommand({ config, params: [], sql });
      expect(text, sql).toContain("handled by the session: a console command");
    }
    const setting = await explainCommand({ config, params: [], sql: "SHOW search_path" });
    expect(setting).not.toContain("a console command");
  });
});

describe("geoproxy explain's files", () => {
  it("names --directory when its file cannot be read, and says what to do", async () => {
    const error = await explainCommand({
      config,
      directory: "no-such-keys.tsv",
      params: [],
      sql: "SELECT 1",
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(
      "no-such-keys.tsv: --directory: cannot read it: there is no such file. Give the path of a key<TAB>region file, or leave --directory out to use the configuration's [directory] file",
    );
  });

  it("names --config when its file cannot be read", async () => {
    const error = await explainCommand({ config: "no-such.toml", params: [], sql: "SELECT 1" }).catch(
      (caught: unknown) => caught,
    );
    expect((error as Error).message).toMatch(
      /^no-such\.toml: --config: cannot read it: there is no such file\. /,
    );
  });
});
