import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/*
 * CI runs the README's commands through scripts/readme-commands.sh, which reads them from the
 * README itself and runs them in a fresh clone. This checks that it reads what the README says a
 * user types, and that CI runs it.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../", import.meta.url));
const script = fileURLToPath(new URL("../../../scripts/readme-commands.sh", import.meta.url));

describe("the check of the README's commands", () => {
  it("reads the demo, the psql session, the explain example and the test command from README.md", async () => {
    const { stdout } = await run("bash", [script, "--print"], { cwd: root });
    const readme = readFileSync(`${root}README.md`, "utf8");
    expect(stdout.split("\n").filter((line) => line !== "")).toEqual([
      "demo: bash scripts/demo.sh",
      "tests: bash scripts/test.sh",
      "psql: psql -h 127.0.0.1 -p 6432 -U postgres -d shop",
      `explain: pnpm exec geoproxy explain --config examples/geoproxy.toml "SELECT * FROM users WHERE tenant_id IN ('alice','bob') ORDER BY id LIMIT 20"`,
      "statement: SHOW REGIONS;",
      "statement: WHERE IS users alice;",
      "statement: SELECT * FROM users WHERE tenant_id = 'bob';",
      "statement: ROUTE SELECT count(*) FROM orders;",
    ]);
    for (const command of ["bash scripts/demo.sh", "bash scripts/test.sh"])
      expect(readme).toContain(`\`\`\`sh\n${command}\n\`\`\``);
  });

  it("is what CI runs, in place of the test command alone", () => {
    const ci = readFileSync(`${root}.ci/run`, "utf8");
    const commands = ci.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    expect(commands.at(-1)).toBe("bash scripts/readme-commands.sh");
    expect(commands).not.toContain("bash scripts/test.sh");
  });
});
