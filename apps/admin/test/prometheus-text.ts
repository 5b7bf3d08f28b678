/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), written for the tests
 * independently of prom-client: any line it does not understand, any sample outside a declared
 * family, a duplicate family or series, or a histogram whose buckets do not add up is an error.
 */
export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("exposition must end with a line feed");
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const seenSeries = new Set<string>();
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, index) => {
    const where = `line ${index + 1}: ${line}`;
    if (line === "") return;
    if (line.startsWith("# HELP ")) {
      const rest = line.slice(7);
      const space = rest.indexOf(" ");
      const name = space < 0 ? rest : rest.slice(0, space);
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in HELP, ${where}`);
      if (helps.has(name)) throw new Error(`second HELP, ${where}`);
      helps.set(name, space < 0 ? "" : unescapeHelp(rest.slice(space + 1)));
      return;
    }
    if (line.startsWith("# TYPE ")) {
      const [name, type, ...extra] = line.slice(7).split(" ");
      if (name === undefined || !METRIC_NAME.test(name) || extra.length > 0)
        throw new Error(`bad TYPE, ${where}`);
      if (!TYPES.has(type as MetricType)) throw new Error(`unknown type, ${where}`);
      if (families.has(name)) throw new Error(`second TYPE, ${where}`);
      families.set(name, { name, type: type as MetricType, help: helps.get(name) ?? "", samples: [] });
      return;
    }
    if (line.startsWith("#")) return;
    const sample = parseSample(line, where);
    const family = familyOf(families, sample.name);
    if (family === undefined) throw new Error(`sample outside any declared family, ${where}`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seenSeries.has(key)) throw new Error(`duplicate series, ${where}`);
    seenSeries.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) {
    if (!helps.has(family.name)) throw new Error(`family ${family.name} has no HELP`);
    if (family.type === "histogram") checkHistogram(family);
  }
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  const exact = families.get(sampleName);
  if (exact !== undefined && exact.type !== "histogram") return exact;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family === undefined) continue;
    if (family.type === "histogram" || (family.type === "summary" && suffix !== "_bucket")) return family;
  }
  if (exact !== undefined && exact.type === "summary") return exact;
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  let i = 0;
  while (i < line.length && /[a-zA-Z0-9_:]/.test(line[i]!)) i++;
  const name = line.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new Error(`bad sample name, ${where}`);
  const labels: Record<string, string> = {};
  if (line[i] === "{") {
    i++;
    while (line[i] !== "}") {
      const start = i;
      while (i < line.length && /[a-zA-Z0-9_]/.test(line[i]!)) i++;
      const labelName = line.slice(start, i);
      if (!LABEL_NAME.test(labelName) || labelName.startsWith("__"))
        throw new Error(`bad label name, ${where}`);
      if (line[i] !== "=" || line[i + 1] !== '"') throw new Error(`expected =", ${where}`);
      i += 2;
      let value = "";
      for (;;) {
        const char = line[i];
        if (char === undefined) throw new Error(`unterminated label value, ${where}`);
        if (char === '"') break;
        if (char === "\\") {
          const next = line[i + 1];
          if (next === "\\") value += "\\";
          else if (next === '"') value += '"';
          else if (next === "n") value += "\n";
          else throw new Error(`bad escape in label value, ${where}`);
          i += 2;
          continue;
        }
        value += char;
        i++;
      }
      i++;
      if (labelName in labels) throw new Error(`label given twice, ${where}`);
      labels[labelName] = value;
      if (line[i] === ",") i++;
      else if (line[i] !== "}") throw new Error(`expected , or }, ${where}`);
    }
    i++;
  }
  if (line[i] !== " ") throw new Error(`expected a space before the value, ${where}`);
  const [valueText, timestamp, ...rest] = line.slice(i + 1).split(" ");
  if (rest.length > 0 || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) {
    throw new Error(`bad value or timestamp, ${where}`);
  }
  return { name, labels, value: parseValue(valueText ?? "", where) };
}

/** Values as Prometheus's own reader takes them: Go's ParseFloat, whose NaN and Inf ignore case. */
function parseValue(text: string, where: string): number {
  if (/^\+?inf$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value ${text}, ${where}`);
  return Number(text);
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(\\|n)/g, (_m, c: string) => (c === "n" ? "\n" : "\\"));
}

/** Buckets carry `le`, rise with it, end at +Inf, and +Inf equals _count for the same labels. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      group.buckets.push([parseValue(le, family.name), sample.value]);
    } else if (sample.name.endsWith("_count")) group.count = sample.value;
    else if (sample.name.endsWith("_sum")) group.sum = sample.value;
  }
  for (const [key, group] of groups) {
    const where = `${family.name}${key}`;
    if (group.count === undefined || group.sum === undefined)
      throw new Error(`${where}: missing _count or _sum`);
    let previous: [number, number] = [Number.NEGATIVE_INFINITY, 0];
    for (const bucket of group.buckets) {
      if (bucket[0] <= previous[0] || bucket[1] < previous[1])
        throw new Error(`${where}: buckets out of order`);
      previous = bucket;
    }
    if (previous[0] !== Number.POSITIVE_INFINITY) throw new Error(`${where}: no +Inf bucket`);
    if (previous[1] !== group.count) throw new Error(`${where}: +Inf bucket differs from _count`);
  }
}
