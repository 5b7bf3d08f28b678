import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULTS } from "../src/index.js";

const reference = readFileSync(new URL("../CONFIG.md", import.meta.url), "utf8");

const SECTIONS: Record<keyof typeof DEFAULTS, string> = {
  server: "## `[server]`",
  region: "An endpoint is",
  table: "## `[[tables]]`",
  routing: "## `[routing]`",
  auth: "## `[auth]`",
  pool: "## `[pool]`",
  tls: "## `[tls]`",
  admin: "## `[admin]`",
  directory: "## `[directory]`",
  directoryStore: "## `[directory_store]`",
  gather: "## `[gather]`",
  txn: "## `[txn]`",
};

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

function rendered(value: unknown): string {
  return typeof value === "string" ? `\`"${value}"\`` : `\`${String(value)}\``;
}

describe("CONFIG.md", () => {
  it("states every default exactly as defaults.ts defines it", () => {
    const rows: string[] = [];
    for (const [section, values] of Object.entries(DEFAULTS)) {
      const start = reference.indexOf(SECTIONS[section as keyof typeof DEFAULTS]);
      expect(start, section).toBeGreaterThanOrEqual(0);
      const text = reference.slice(start, reference.indexOf("\n## ", start + 5));
      for (const [field, value] of Object.entries(values)) {
        let name = snake(field);
        if (section === "tls" && field === "backendSslmode") name = "backend_sslmode";
        const row = text.split("\n").find((line) => line.startsWith(`| \`${name}\``));
        if (row === undefined || !row.includes(rendered(value)))
          rows.push(`${section}.${name} = ${rendered(value)}`);
      }
    }
    expect(rows).toEqual([]);
  });
});
