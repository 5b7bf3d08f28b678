#!/usr/bin/env node
import { ConfigError } from "@geo/core";
import {
  type CliCommand,
  commandHelp,
  readCommandLine,
  UsageError,
  usageLine,
} from "./commands/command-line.js";
import { EXPLAIN } from "./commands/explain.js";
import { topLevelHelp } from "./commands/help.js";
import { SERVE } from "./commands/serve.js";
import { StartupError } from "./server/startup-error.js";

const COMMANDS: readonly CliCommand[] = [SERVE, EXPLAIN];

function commandNamed(name: string): CliCommand | undefined {
  return COMMANDS.find((command) => command.name === name);
}

/** Exit statuses from sysexits.h, so scripts can tell a typo from a broken configuration. */
const EXIT = { usage: 64, software: 70, config: 78, unavailable: 69 } as const;

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError("no command given");
  if (name === "--help" || name === "-h") {
    process.stdout.write(`${topLevelHelp(COMMANDS)}\n`);
    return 0;
  }
  if (name === "help") {
    const [topic, ...extra] = rest;
    const command = topic === undefined ? undefined : commandNamed(topic);
    if (topic !== undefined && command === undefined) throw new UsageError(`no command named ${topic}`);
    if (extra.length > 0) throw new UsageError("help takes one command name at most");
    process.stdout.write(`${command === undefined ? topLevelHelp(COMMANDS) : commandHelp(command)}\n`);
    return 0;
  }
  const command = commandNamed(name);
  if (command === undefined)
    throw new UsageError(name.startsWith("-") ? `unknown option ${name}` : `unknown command ${name}`);
  const line = readCommandLine(command, rest);
  if (line.values.help === true) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  return command.run(line);
}

function usageOf(error: UsageError): string {
  if (error.command !== undefined)
    return `${usageLine(error.command)}\nRun geoproxy ${error.command.name} --help for every option.`;
  return [
    "usage: geoproxy <command> [options]",
    ...COMMANDS.map((command) => `  ${usageLine(command).slice("usage: ".length)}`),
    "Run geoproxy --help for more.",
  ].join("\n");
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
      process.stderr.write(`geoproxy: ${error.message}\n${usageOf(error)}\n`);
      process.exitCode = EXIT.usage;
    } else if (error instanceof ConfigError) {
      process.stderr.write(`geoproxy: configuration error: ${error.message}\n`);
      process.exitCode = EXIT.config;
    } else if (error instanceof StartupError) {
      for (const line of error.lines) process.stderr.write(`geoproxy: ${line}\n`);
      process.exitCode = EXIT.unavailable;
    } else {
      process.stderr.write(`geoproxy: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = EXIT.software;
    }
  },
);
