#!/usr/bin/env node
// The command line is compiled into dist/ by the build. This file is there before the build is,
// because pnpm links a package's bin at install time only when its file exists: with the bin
// pointing here, `pnpm exec geoproxy` works in a fresh checkout as soon as it is built.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write(
    "geoproxy: the command line is not built yet; run `pnpm run build` in the repository\n",
  );
  process.exit(70);
}
await import(cli.href);
