import { fileURLToPath } from "node:url";
import { loadConfig, loadDirectoryTsv, Topology } from "../../src/index.js";

/** The repository's `examples/` folder (with a trailing slash): the configuration the docs show. */
export const examples = fileURLToPath(new URL("../../../../examples/", import.meta.url));

/** The example topology; each test file gets its own copy, since vitest loads modules per file. */
export const exampleTopology = Topology.fromConfig(loadConfig(`${examples}topology.toml`));

/** The example key directory, placed on `exampleTopology`. */
export const exampleDirectory = loadDirectoryTsv(`${examples}keys.tsv`, exampleTopology);
