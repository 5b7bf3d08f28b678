import type { CliCommand } from "./command-line.js";

/** `geoproxy --help`: what geoproxy is, its commands, and where each one's help is. */
export function topLevelHelp(commands: readonly CliCommand[]): string {
  const width = Math.max(...commands.map((command) => command.name.length), "help".length);
  return [
    "usage: geoproxy <command> [options]",
    "",
    "geoproxy is a PostgreSQL wire-protocol proxy for multi-region PostgreSQL: it sends each",
    "statement to the region that holds its rows.",
    "",
    "commands:",
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    `  ${"help".padEnd(width)}  print this help, or a command's: geoproxy help <command>`,
    "",
    "Run geoproxy <command> --help for a command's options, their defaults and examples.",
    "",
    "examples:",
    "  geoproxy serve --config examples/geoproxy.toml",
    `  geoproxy explain --config examples/geoproxy.toml "SELECT * FROM users WHERE tenant_id = 'bob'"`,
  ].join("\n");
}
