import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A `[txn]` section that gives one proxy a fresh, empty folder for its decision log. The default
 * folder sits in the working directory and its log is locked by the process that opened it, so
 * two proxies of one test process (or two test runs in one checkout) must never share it.
 */
export function txnSection(settings = ""): string {
  const dataDir = mkdtempSync(join(tmpdir(), "geo-txn-"));
  return `\n[txn]\ndata_dir = "${dataDir}"\n${settings}`;
}
