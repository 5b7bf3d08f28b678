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
