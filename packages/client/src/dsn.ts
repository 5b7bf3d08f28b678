/** The fields of a primary given as separate variables; the replica reuses all but the host. */
export interface ConnectionParts {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string | undefined;
  readonly database: string;
  readonly sslmode: string | undefined;
}

const schemes = new Set(["postgres:", "postgresql:"]);

/**
 * Why `text` cannot be handed to postgres.js as a URL, or undefined when it can. The reason never
 * repeats the text itself: it may hold a password.
 */
export function urlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "it does not parse as a URL";
  }
  if (!schemes.has(url.protocol))
    return `the scheme is ${url.protocol.slice(0, -1)}, not postgres or postgresql`;
  if (url.hostname === "") return "it names no host";
  return undefined;
}

function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Renders parts as a URL, percent-encoding the fields a password or name could break. */
export function urlFromParts(parts: ConnectionParts): string {
  const credentials =
    parts.password === undefined
      ? encodeURIComponent(parts.user)
      : `${encodeURIComponent(parts.user)}:${encodeURIComponent(parts.password)}`;
  const query = parts.sslmode === undefined ? "" : `?sslmode=${encodeURIComponent(parts.sslmode)}`;
  return `postgres://${credentials}@${hostForUrl(parts.host)}:${parts.port}/${encodeURIComponent(parts.database)}${query}`;
}

/**
 * A form of a URL in which two spellings of one endpoint compare equal: either scheme, an
 * omitted or explicit 5432, host case, query order. Undefined for text that is not a URL, which
 * then only equals itself.
 */
export function endpointKey(text: string): string | undefined {
  if (urlProblem(text) !== undefined) return undefined;
  const url = new URL(text);
  const params = [...url.searchParams.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    decodeURIComponent(url.username),
    decodeURIComponent(url.password),
    url.hostname.toLowerCase(),
    url.port === "" ? "5432" : url.port,
    decodeURIComponent(url.pathname),
    params,
  ]);
}

/** True when both texts name the same endpoint, so a second pool would only duplicate the first. */
export function sameEndpoint(a: string, b: string): boolean {
  if (a === b) return true;
  const keyA = endpointKey(a);
  return keyA !== undefined && keyA === endpointKey(b);
}

/** The URL with its password replaced, for logs and events. */
export function redactUrl(text: string): string {
  if (urlProblem(text) !== undefined) return "(unparseable URL)";
  const url = new URL(text);
  if (url.password !== "") url.password = "***";
  return url.toString();
}
