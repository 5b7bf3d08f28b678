import { ConfigError, type ConfigErrorCode } from "../errors/config-error.js";
import { lineOf } from "./key-lines.js";

export type TomlObject = Record<string, unknown>;

/** Reads typed fields from one TOML table, reporting problems with file, line, path and choices. */
export class FieldReader {
  constructor(
    readonly file: string,
    private readonly lines: Map<string, number>,
    readonly path: string,
    readonly object: TomlObject,
  ) {}

  fail(code: ConfigErrorCode, field: string | undefined, detail: string, choices?: readonly string[]): never {
    const path = field === undefined ? this.path : this.pathOf(field);
    const line = lineOf(this.lines, path);
    throw new ConfigError({
      code,
      file: this.file,
      path,
      detail,
      ...(line === undefined ? {} : { line }),
      ...(choices === undefined ? {} : { choices }),
    });
  }

  pathOf(field: string): string {
    return this.path === "" ? field : `${this.path}.${field}`;
  }

  /** Unknown fields are errors: a misspelt `residncy` must not silently mean the default. */
  onlyKnown(known: readonly string[]): void {
    for (const field of Object.keys(this.object)) {
      if (!known.includes(field)) this.fail("unknown_field", field, "unknown field", known);
    }
  }

  has(field: string): boolean {
    return this.object[field] !== undefined;
  }

  string(field: string, fallback: string): string;
  string(field: string): string | undefined;
  string(field: string, fallback?: string): string | undefined {
    const value = this.object[field];
    if (value === undefined) return fallback;
    if (typeof value !== "string")
      this.fail("wrong_type", field, `expected a string, found ${describe(value)}`);
    if (value === "") this.fail("invalid_value", field, "must not be empty");
    return value;
  }

  requiredString(field: string): string {
    const value = this.string(field);
    if (value === undefined) this.fail("missing_field", field, "is required");
    return value;
  }

  choice<T extends string>(field: string, choices: readonly T[], fallback: T): T;
  choice<T extends string>(field: string, choices: readonly T[]): T | undefined;
  choice<T extends string>(field: string, choices: readonly T[], fallback?: T): T | undefined {
    const value = this.object[field];
    if (value === undefined) return fallback;
    if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
      this.fail("invalid_value", field, `unknown value ${describe(value)}`, choices);
    }
    return value as T;
  }

  integer(field: string, fallback: number, min: number, max: number): number {
    const value = this.object[field];
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isInteger(value)) {
      this.fail("wrong_type", field, `expected an integer, found ${describe(value)}`);
    }
    if (value < min || value > max) this.fail("invalid_value", field, `${value} is outside ${min}..${max}`);
    return value;
  }

  boolean(field: string, fallback: boolean): boolean {
    const value = this.object[field];
    if (value === undefined) return fallback;
    if (typeof value !== "boolean")
      this.fail("wrong_type", field, `expected true or false, found ${describe(value)}`);
    return value;
  }

  stringList(field: string): string[] {
    const value = this.object[field];
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
      this.fail("wrong_type", field, `expected an array of strings, found ${describe(value)}`);
    }
    return value as string[];
  }

  table(field: string): FieldReader | undefined {
    const value = this.object[field];
    if (value === undefined) return undefined;
    if (!isTable(value)) this.fail("wrong_type", field, `expected a table, found ${describe(value)}`);
    return new FieldReader(this.file, this.lines, this.pathOf(field), value);
  }

  tables(field: string): FieldReader[] {
    const value = this.object[field];
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every(isTable)) {
      this.fail("wrong_type", field, `expected an array of tables, found ${describe(value)}`);
    }
    return (value as TomlObject[]).map(
      (item, index) => new FieldReader(this.file, this.lines, `${this.pathOf(field)}[${index}]`, item),
    );
  }
}

export function isTable(value: unknown): value is TomlObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "an array";
  if (isTable(value)) return "a table";
  return String(value);
}
