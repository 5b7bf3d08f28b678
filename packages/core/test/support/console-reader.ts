import type { ConsoleReader } from "@geo/sql";

/**
 * A stand-in for an embedding's console (core may not import the proxy's): `SHOW REGIONS`, and
 * nothing else, is a console command. The planner only looks at the analysis's kind.
 */
export const showRegionsConsole: ConsoleReader = {
  read: (text) =>
    /^\s*show\s+regions\s*;?\s*$/i.test(text)
      ? { command: "show-regions", argument: "", changesProxyState: false }
      : undefined,
  mayHold: (text) => /\bshow\s+regions\b/i.test(text),
};
