import { readText } from "../config/load-config.js";
import type { KeyType, RegionId } from "../config/types.js";
import { ConfigError } from "../errors/config-error.js";
import { canonicalKey } from "../topology/placement.js";
import type { Topology } from "../topology/topology.js";
import { MemoryDirectory } from "./memory-directory.js";

/**
 * Parses a directory file: one `key<TAB>region` per line; blank lines and lines starting with `#`
 * are skipped. A key is everything before the tab, spaces included, so keys with spaces survive.
 * Errors name the file and line: a missing tab, an unknown region, a key listed twice. Integer
 * keys are stored canonical (`007` as `7`), as lookups spell them.
 */
export function parseDirectoryTsv(
  text: string,
  topology: Topology,
  file = "<directory>",
  keyType: KeyType = "text",
): MemoryDirectory {
  const directory = new MemoryDirectory();
  const firstSeen = new Map<string, number>();
  const rows = text.split(/\r?\n/);
  const fail = (line: number, detail: string, choices?: readonly string[]): never => {
    throw new ConfigError({
      code: "invalid_value",
      file,
      line,
      detail,
      ...(choices === undefined ? {} : { choices }),
    });
  };
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!;
    const line = index + 1;
    if (row.trim() === "" || row.startsWith("#")) continue;
    const tab = row.indexOf("\t");
    if (tab < 0) fail(line, `expected key<TAB>region, found ${JSON.stringify(row)}`);
    const key = canonicalKey(row.slice(0, tab), keyType);
    const region: RegionId = row.slice(tab + 1).trim();
    if (key === "") fail(line, "the key is empty");
    if (!topology.hasRegion(region))
      fail(line, `unknown region ${JSON.stringify(region)}`, topology.regionIds);
    const earlier = firstSeen.get(key);
    if (earlier !== undefined) {
      throw new ConfigError({
        code: "duplicate",
        file,
        line,
        detail: `key ${JSON.stringify(key)} is already listed on line ${earlier}`,
      });
    }
    firstSeen.set(key, line);
    directory.assign(key, region);
  }
  return directory;
}

/** Reads a directory file. */
export function loadDirectoryTsv(
  path: string,
  topology: Topology,
  keyType: KeyType = "text",
): MemoryDirectory {
  return parseDirectoryTsv(readText(path), topology, path, keyType);
}
