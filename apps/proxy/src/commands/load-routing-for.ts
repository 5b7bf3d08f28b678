import { ConfigError, loadRouting } from "@geo/core";

/**
 * `loadRouting` for a command line: a `--config` or `--directory` file that cannot be read is
 * named by its option, so the message says which argument to correct.
 */
export function loadRoutingFor(configPath: string, directoryPath?: string): ReturnType<typeof loadRouting> {
  try {
    return loadRouting(configPath, directoryPath);
  } catch (error) {
    // A field's error (the configuration's [directory] file) already names its field.
    if (!(error instanceof ConfigError) || error.code !== "unreadable" || error.path !== undefined)
      throw error;
    const option =
      directoryPath !== undefined && error.file === directoryPath
        ? "--directory"
        : configPath !== undefined && error.file === configPath
          ? "--config"
          : undefined;
    if (option === undefined) throw error;
    throw new ConfigError({
      code: error.code,
      file: error.file,
      path: option,
      detail:
        option === "--directory"
          ? `${error.detail}. Give the path of a key<TAB>region file, or leave --directory out to use the configuration's [directory] file`
          : `${error.detail}. Give the path of the configuration, or leave --config out to use geoproxy.toml in the current folder`,
      cause: error,
    });
  }
}
