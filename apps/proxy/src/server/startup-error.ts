/**
 * Why the proxy could not start, one line per problem (a configuration error, each unreachable
 * region), for the command line to print as is before exiting non-zero.
 */
export class StartupError extends Error {
  override readonly name = "StartupError";

  constructor(readonly lines: readonly string[]) {
    super(lines.join("\n"));
  }
}

export function startupErrors(
  failures: readonly { region: string; endpoint: string; message: string }[],
): string[] {
  return failures.map(
    (failure) => `region ${failure.region} (${failure.endpoint}) is unreachable: ${failure.message}`,
  );
}
