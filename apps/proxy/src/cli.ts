#!/usr/bin/env node
import { ConfigError } from "@geo/core";
import { explainCommand } from "./commands/explain.js";
import { serve } from "./commands/serve.js";
import { LOG_LEVELS, type LogLevel } from "./log.js";
import { StartupError } from "./server/startup-error.js";

const USAGE = `usage:
  geoproxy serve --config <geoproxy.toml> [--directory <keys.tsv>] [--log-level info|debug|...]
  geoproxy explain --topology <topology.toml> [--directory <keys.tsv>] [--param <value> ...] "<sql>"
--directory overrides the configuration's [directory] file.`;

class UsageError extends Error {}

interface Parsed {
  readonly command: string;
  readonly flags: Map<string, string[]>;
  readonly positional: string[];
}

function parseArgs(argv: readonly string[]): Parsed {
  const [command = "", ...rest] = argv;
  const flags = new Map<string, string[]>();
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--") {
      positional.push(...rest.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const value = eq < 0 ? rest[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags.set(name, [...(flags.get(name) ?? []), value]);
    } else positional.push(arg);
  }
  return { command, flags, positional };
}

function only(parsed: Parsed, name: string, allowed: readonly string[]): string | undefined {
  for (const flag of parsed.flags.keys()) {
    if (!allowed.includes(flag)) throw new UsageError(`unknown option --${flag} for ${parsed.command}`);
  }
  const values = parsed.flags.get(name);
  if (values !== undefined && values.length > 1) throw new UsageError(`--${name} given more than once`);
  return values?.[0];
}

async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv);
  switch (parsed.command) {
    case "serve": {
      const allowed = ["config", "directory", "log-level", "shutdown-timeout-ms"];
      const config = only(parsed, "config", allowed);
      if (config === undefined) throw new UsageError("serve needs --config <file>");
      const directory = only(parsed, "directory", allowed);
      const level = only(parsed, "log-level", allowed) ?? "info";
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new UsageError(`--log-level ${level} is not one of ${LOG_LEVELS.join(", ")}`);
      }
      const timeout = only(parsed, "shutdown-timeout-ms", allowed);
      await serve({
        config,
        ...(directory === undefined ? {} : { directory }),
        logLevel: level as LogLevel,
        ...(timeout === undefined ? {} : { shutdownTimeoutMs: Number(timeout) }),
      });
      return -1;
    }
    case "explain": {
      const allowed = ["topology", "directory", "param"];
      const topology = only(parsed, "topology", allowed);
      if (topology === undefined) throw new UsageError("explain needs --topology <file>");
      const directory = only(parsed, "directory", allowed);
      if (parsed.positional.length !== 1)
        throw new UsageError('explain needs one statement, quoted: "SELECT ..."');
      const output = await explainCommand({
        topology,
        ...(directory === undefined ? {} : { directory }),
        params: parsed.flags.get("param") ?? [],
        sql: parsed.positional[0]!,
      });
      process.stdout.write(`${output}\n`);
      return 0;
    }
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      throw new UsageError(parsed.command === "" ? "no command given" : `unknown command ${parsed.command}`);
  }
}

process.on("unhandledRejection", (reason) => {
  process.stderr.write(`geoproxy: internal error (unhandled rejection): ${String(reason)}\n`);
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`geoproxy: ${error.message}\n${USAGE}\n`);
      process.exitCode = 64;
    } else if (error instanceof ConfigError) {
      process.stderr.write(`geoproxy: configuration error: ${error.message}\n`);
      process.exitCode = 78;
    } else if (error instanceof StartupError) {
      for (const line of error.lines) process.stderr.write(`geoproxy: ${line}\n`);
      process.exitCode = 69;
    } else {
      process.stderr.write(`geoproxy: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 70;
    }
  },
);
