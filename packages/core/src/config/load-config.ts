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
    throw new ConfigError({
      code: "unreadable",
      file: path,
      detail: `cannot read it: ${readFailure(error)}`,
      cause: error,
    });
  }
}

/** Why a file could not be read, in words rather than an errno name. */
export function readFailure(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return "there is no such file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a folder, not a file";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
