import { readFileSync } from "node:fs";
import { ConfigError } from "../errors/config-error.js";
import { parseConfig } from "./parse-config.js";
import type { GeoConfig } from "./types.js";

/** Reads and validates a configuration file: the one place this package touches the file system for it. */
export function loadConfig(path: string): GeoConfig {
  return parseConfig(readText(path), path);
}

export function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError({ code: "unreadable", file: path, detail: (error as Error).message, cause: error });
  }
}
