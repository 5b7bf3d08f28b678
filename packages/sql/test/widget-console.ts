import type { ConsoleCommand, ConsoleReader } from "../src/index.js";

/**
 * A console of made-up words, standing for an embedding's: `SHOW WIDGETS` and `COUNT WIDGETS
 * <argument>` only report, `FREEZE WIDGETS <argument>` changes the embedding's state. That no real
 * console word works without it shows this package knows none of its own.
 */
const WIDGET_COMMAND = /^(?:\s|\/\*[\s\S]*?\*\/)*(show|count|freeze)\s+widgets\b([\s\S]*)$/i;

export const widgetConsole: ConsoleReader = {
  read(text: string): ConsoleCommand | undefined {
    const match = WIDGET_COMMAND.exec(text);
    const verb = match?.[1]?.toLowerCase();
    if (match === null || verb === undefined) return undefined;
    const rest = (match[2] ?? "").trim();
    return {
      command: `${verb}-widgets`,
      argument: (rest.endsWith(";") ? rest.slice(0, -1) : rest).trim(),
      changesProxyState: verb === "freeze",
    };
  },
  mayHold: (text: string) => /\bwidgets\b/i.test(text),
};
