/**
 * A reader of the Prometheus text format (0.0.4) for the tests, independent of prom-client: each
 * sample line becomes `{ name, labels, value }`; a line it cannot read is an error, as is a sample
 * whose family has no `# TYPE`.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Scrape {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
  /** The value of the one sample with this name and (at least) these labels; undefined if none. */
  value(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
  /** Every sample with this name. */
  all(name: string): Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

function familyOf(name: string, types: ReadonlyMap<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ["_bucket", "_sum", "_count", "_total", "_created"]) {
    if (name.endsWith(suffix) && types.has(name.slice(0, -suffix.length)))
      return name.slice(0, -suffix.length);
  }
  return undefined;
}

/** As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case; prom-client writes `Nan`. */
function readValue(text: string): number {
  if (/^\+?inf$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

export function parseScrape(text: string): Scrape {
  if (!text.endsWith("\n")) throw new Error("a scrape ends with a line feed");
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue;
    if (line.startsWith("# TYPE ")) {
      const [name, type] = line.slice(7).split(" ");
      if (name === undefined || type === undefined) throw new Error(`bad TYPE line: ${line}`);
      types.set(name, type);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`unreadable line: ${line}`);
    const name = match[1]!;
    if (familyOf(name, types) === undefined) throw new Error(`sample without a TYPE: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? "";
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const label = LABEL.exec(body);
      if (label === null) throw new Error(`unreadable labels: ${line}`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_all, char: string) => (char === "n" ? "\n" : char));
    }
    samples.push({ name, labels, value: readValue(match[3]!) });
  }
  const matches = (sample: Sample, labels: Readonly<Record<string, string>>): boolean =>
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value);
  return {
    types,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((sample) => sample.name === name && matches(sample, labels));
      if (found.length > 1)
        throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
    all(name) {
      return samples.filter((sample) => sample.name === name);
    },
  };
}
