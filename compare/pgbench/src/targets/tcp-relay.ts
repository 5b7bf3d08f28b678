import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, waitUntilListening } from "../ports.js";
import { startProcess } from "../teardown.js";
import type { Backend, Target } from "./target.js";

const relayScript = fileURLToPath(new URL("./tcp-relay-process.mjs", import.meta.url));

/** Starts the bare relay as its own node process, so its CPU time is its own in /proc. */
export async function startTcpRelay(backend: Backend, workDir: string): Promise<Target> {
  const port = await freePort();
  const relay = startProcess(
    "node tcp relay",
    process.execPath,
    [relayScript, String(port), backend.host, String(backend.port)],
    join(workDir, "tcp-relay.log"),
  );
  await waitUntilListening(relay, port);
  return { name: "relay", host: "127.0.0.1", port, proxyPid: relay.pid };
}
