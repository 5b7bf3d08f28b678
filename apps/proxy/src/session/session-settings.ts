import type { Analysis, SessionEffect } from "@geo/sql";
import { quoteLiteral, settingName } from "./settings/quote.js";

/** The settings that decide which role runs a statement, reset before any other in a replay. */
const IDENTITY_SETTINGS: readonly string[] = ["session_authorization", "role"];

export { quoteLiteral, settingName } from "./settings/quote.js";

/**
 * The session state a client set, kept by the proxy because the client's statements run on
 * whichever pooled connection is free. Settings follow the client as the SQL that set them: on a
 * connection whose `appliedSettings` differ, the difference is replayed (SET for what the client has,
 * RESET for what the connection has and the client does not) before the client's statement, so a
 * setting reaches every connection the client uses and never the next client of that connection.
 *
 * The client's startup settings are also what RESET returns to, as PostgreSQL makes a startup
 * parameter the setting's reset value: `RESET name`, `RESET ALL` and `DISCARD ALL` give the
 * session its startup statements back (settings/reset-to-startup.ts makes the backend do the same).
 */
export class SessionSettings {
  /** Setting name (lower case) -> the statement that gives it its value. */
  private readonly values = new Map<string, string>();
  /** Setting name (lower case) -> the statement of its startup value: what RESET returns to. */
  private startup: ReadonlyMap<string, string> = new Map();
  /**
   * Settings a RESET sent as written (inside a longer query string) returned to the connection's
   * own reset value rather than the client's startup value: the connection does not hold the
   * session's statement for them, so `markApplied` leaves them out and the next replay sets them.
   */
  private readonly unapplied = new Set<string>();
  /** Set while the proxy sends a RESET as the client's startup SETs (settings/reset-to-startup.ts). */
  private resetSentAsStartup = false;

  /** The next RESET recorded was sent as the startup SETs: the connection holds them. */
  sentAsStartup(): void {
    this.resetSentAsStartup = true;
  }

  /**
   * StartupMessage parameters that are settings (application_name, client_encoding, `-c`
   * options...). application_name is always one: a client that gave none has '', not the
   * proxy's own name its pooled connections were opened with.
   */
  static fromStartup(parameters: Readonly<Record<string, string>>): SessionSettings {
    const settings = new SessionSettings();
    for (const [name, value] of startupSettings(parameters)) settings.setValue(name, value);
    settings.startup = new Map(settings.values);
    return settings;
  }

  /** The statement that gives `name` its startup value, if the client connected with one. */
  startupStatement(name: string): string | undefined {
    return this.startup.get(name.toLowerCase());
  }

  /** Every startup statement, in the order the client gave them. */
  startupStatements(): string[] {
    return [...this.startup.values()];
  }

  get size(): number {
    return this.values.size;
  }

  entries(): IterableIterator<[string, string]> {
    return this.values.entries();
  }

  setValue(name: string, value: string): void {
    // A startup value is the setting's string: for a list whose items PostgreSQL quotes
    // (search_path, temp_tablespaces) `SET x TO 'a,b'` would make it one item named "a,b".
    const statement = QUOTED_LISTS.has(name.toLowerCase())
      ? `SELECT pg_catalog.set_config(${quoteLiteral(name)}, ${quoteLiteral(value)}, false)`
      : `SET ${settingName(name)} TO ${quoteLiteral(value)}`;
    this.put(name, statement);
  }

  /**
   * Kept in the order of each setting's latest change, which is the order a replay runs them in:
   * a SET written after `SET standard_conforming_strings = off` is replayed after it, so its
   * literal reads the same as when the client wrote it.
   */
  private put(name: string, statement: string): void {
    const key = name.toLowerCase();
    this.values.delete(key);
    this.values.set(key, statement);
  }

  /**
   * Records what a statement that succeeded did to the session's settings. SET LOCAL and
   * set_config(..., true) end with their transaction and are not recorded.
   */
  record(analysis: Analysis): void {
    for (const effect of analysis.sessionEffects) {
      this.recordEffect(effect, analysis);
      // SET and RESET SESSION AUTHORIZATION also end a SET ROLE: the role is none again.
      if (
        !effect.local &&
        (effect.kind === "set" || effect.kind === "reset") &&
        effect.name?.toLowerCase() === "session_authorization"
      )
        this.values.delete("role");
    }
    this.resetSentAsStartup = false;
  }

  private recordEffect(effect: SessionEffect, analysis: Analysis): void {
    if (effect.local) return;
    switch (effect.kind) {
      case "set":
        if (effect.name === undefined) return;
        this.put(effect.name, analysis.text.trim().replace(/;\s*$/, ""));
        return;
      case "set-config":
        if (effect.name !== undefined && effect.value !== undefined) {
          this.put(
            effect.name,
            `SELECT pg_catalog.set_config(${quoteLiteral(effect.name)}, ${quoteLiteral(effect.value)}, false)`,
          );
        }
        return;
      case "reset":
        if (effect.name === undefined) this.resetAll();
        else {
          const name = effect.name.toLowerCase();
          const startup = this.startup.get(name);
          if (startup === undefined) this.values.delete(name);
          else {
            this.put(name, startup);
            if (!this.resetSentAsStartup) this.unapplied.add(name);
          }
        }
        return;
      case "discard":
        if (effect.value === "all") this.resetAll();
        return;
      case "listen":
      case "unlisten":
      case "prepare":
      case "execute":
      case "deallocate":
      case "declare-with-hold":
      case "create-temp":
      case "advisory-lock":
      case "close-cursor":
      case "load":
        return;
    }
  }

  private resetAll(): void {
    this.values.clear();
    for (const [name, statement] of this.startup) {
      this.values.set(name, statement);
      if (!this.resetSentAsStartup) this.unapplied.add(name);
    }
  }

  /**
   * The statements that make a connection's settings equal the session's, or null when they
   * already are. `applied` is the connection's record (name -> statement) of what it holds.
   */
  /**
   * True when `replayFor(applied)` would be null: the connection holds exactly the session's
   * settings. Builds nothing, for the fast lane's check of every statement.
   */
  matches(applied: ReadonlyMap<string, string>): boolean {
    // Every statement of the session's found in `applied`, and no other: nothing to SET or RESET.
    if (applied.size !== this.values.size) return false;
    for (const [name, statement] of this.values) if (applied.get(name) !== statement) return false;
    return true;
  }

  replayFor(applied: ReadonlyMap<string, string>): string | null {
    const statements: string[] = [];
    // Another client's SET SESSION AUTHORIZATION or SET ROLE goes first: the resets after it may
    // need the login role's privileges (RESET of a superuser-only setting fails as that role).
    for (const name of IDENTITY_SETTINGS) {
      if (applied.has(name) && applied.get(name) !== this.values.get(name))
        statements.push(`RESET ${settingName(name)}`);
    }
    for (const name of applied.keys()) {
      if (!this.values.has(name) && !IDENTITY_SETTINGS.includes(name))
        statements.push(`RESET ${settingName(name)}`);
    }
    for (const [name, statement] of this.values) {
      if (applied.get(name) !== statement) statements.push(statement);
    }
    return statements.length === 0 ? null : statements.join("; ");
  }

  /** After a replay succeeded: the connection now holds exactly the session's settings. */
  markApplied(applied: Map<string, string>): void {
    applied.clear();
    for (const [name, statement] of this.values) if (!this.unapplied.has(name)) applied.set(name, statement);
    this.unapplied.clear();
  }

  /**
   * The schemas of the session's search_path, in order, when the client set one, else the one
   * its role starts with where that may shadow public (undefined: the planner's assumption,
   * `"$user", public` with no schema named after the role). Read from the statement
   * that set it, so a rollback or RESET that restored another statement restores this too.
   */
  searchPath(): readonly string[] | undefined {
    const statement = this.values.get("search_path");
    if (statement === undefined) return this.startingSearchPath;
    if (this.searchPathOf?.statement !== statement)
      this.searchPathOf = { statement, schemas: searchPathSchemas(statement) };
    return this.searchPathOf.schemas;
  }

  private searchPathOf: { statement: string; schemas: readonly string[] } | undefined;

  /**
   * The search_path the login's server starts the role with (ALTER ROLE or ALTER DATABASE ...
   * SET, the server's configuration), read by the startup check, where it may shadow public.
   */
  startingSearchPath: readonly string[] | undefined;

  /** A copy, so a transaction can roll back to it. */
  snapshot(): SessionSettings {
    const copy = new SessionSettings();
    for (const [name, statement] of this.values) copy.values.set(name, statement);
    copy.startup = this.startup;
    copy.startingSearchPath = this.startingSearchPath;
    return copy;
  }

  restore(from: SessionSettings): void {
    this.values.clear();
    for (const [name, statement] of from.values) this.values.set(name, statement);
  }
}

/** The settings among StartupMessage parameters, `options` split into its `-c name=value` pairs. */
export function startupSettings(parameters: Readonly<Record<string, string>>): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(parameters)) {
    if (NOT_SETTINGS.has(name) || name.startsWith("_pq_.")) continue;
    if (name === "options") pairs.push(...parseOptions(value));
    else pairs.push([name, value]);
  }
  // The proxy opens its connections with its own application_name: the client's is '' if none.
  if (!pairs.some(([name]) => name.toLowerCase() === "application_name"))
    pairs.unshift(["application_name", ""]);
  return pairs;
}

/** StartupMessage fields that are not run-time settings. */
const NOT_SETTINGS = new Set(["user", "database", "replication"]);

/** `-c name=value` and `--name=value` pairs of the `options` startup parameter. */
export function parseOptions(options: string): [string, string][] {
  const words: string[] = [];
  let current = "";
  let escaped = false;
  for (const char of options) {
    if (escaped) {
      current += char;
      escaped = false;
    } else if (char === "\\") escaped = true;
    else if (char === " " || char === "\t") {
      if (current !== "") words.push(current);
      current = "";
    } else current += char;
  }
  if (current !== "") words.push(current);
  const pairs: [string, string][] = [];
  for (let i = 0; i < words.length; i++) {
    let word = words[i]!;
    if (word === "-c") word = words[++i] ?? "";
    else if (word.startsWith("-c")) word = word.slice(2);
    else if (word.startsWith("--")) word = word.slice(2);
    else continue;
    const eq = word.indexOf("=");
    if (eq <= 0) continue;
    pairs.push([word.slice(0, eq).replaceAll("-", "_"), word.slice(eq + 1)]);
  }
  return pairs;
}

/**
 * The schema names of a statement that sets search_path: `SET search_path = app, "Mixed"` or
 * `SELECT pg_catalog.set_config('search_path', 'app, public', false)` (the setting's string,
 * as a startup parameter gives it). Unquoted names fold to lower case, as PostgreSQL folds them.
 */
/** Settings whose value is a list of names PostgreSQL quotes one by one (GUC_LIST_QUOTE). */
const QUOTED_LISTS = new Set(["search_path", "temp_tablespaces"]);

/** A search_path whose schemas cannot be read (set from a computed value): it may shadow anything. */
export const UNKNOWN_SEARCH_PATH: readonly string[] = Object.freeze(["<unknown>"]);

/**
 * The search_path a statement of local settings (SET LOCAL, set_config(..., true)) leaves the
 * block with, or null when it does not set it. A setting whose name or value the analysis could
 * not read may be search_path: unknown.
 */
export function localSearchPathOf(analysis: Analysis, sql: string): readonly string[] | null {
  let searchPath: readonly string[] | null = null;
  for (const effect of analysis.sessionEffects) {
    const name = effect.name?.toLowerCase();
    if (name !== undefined && name !== "search_path") continue;
    if (effect.kind === "set" && name !== undefined) searchPath = searchPathSchemas(sql);
    else if (effect.kind === "set-config" && name !== undefined && effect.value !== undefined)
      searchPath = searchPathSchemas(`set_config('search_path', ${quoteLiteral(effect.value)}`);
    else searchPath = UNKNOWN_SEARCH_PATH;
  }
  return searchPath;
}

export function searchPathSchemas(statement: string): string[] {
  const setConfig = /set_config\(\s*'search_path'\s*,\s*'((?:[^']|'')*)'/i.exec(statement);
  const list =
    setConfig !== null ? setConfig[1]!.replace(/''/g, "'") : statement.replace(/^[^=]*?(=|\bto\b)/i, "");
  const schemas: string[] = [];
  for (const item of splitOutsideQuotes(list)) {
    const trimmed = item.trim();
    if (trimmed === "") continue;
    // In SET a quoted literal is one schema name, quoted by the server ('a,b' is "a,b").
    if (setConfig === null && trimmed.startsWith("'") && trimmed.endsWith("'"))
      schemas.push(trimmed.slice(1, -1).replace(/''/g, "'"));
    else schemas.push(schemaName(trimmed));
  }
  return schemas;
}

function schemaName(word: string): string {
  if (word.startsWith('"') && word.endsWith('"') && word.length >= 2)
    return word.slice(1, -1).replace(/""/g, '"');
  return word.toLowerCase();
}

function splitOutsideQuotes(text: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quote: string | null = null;
  for (const char of text) {
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === ",") {
      parts.push(current);
      current = "";
      continue;
    }
    current += char;
  }
  parts.push(current);
  return parts;
}
