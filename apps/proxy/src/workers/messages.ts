import { MAX_WORKERS } from "@geo/core";

/**
 * What a worker tells the primary over the cluster's IPC channel: that it listens, and a
 * CancelRequest whose key another worker issued (worker-key.ts).
 */
export type WorkerReport =
  | { readonly type: "geoproxy:listening"; readonly port: number; readonly node: string }
  | {
      readonly type: "geoproxy:cancel";
      readonly worker: number;
      readonly processId: number;
      /** Hex: IPC messages are JSON, where a Buffer would become an array of numbers. */
      readonly secretKey: string;
    };

/** What the primary tells a worker: a CancelRequest to handle as its own, or to stop gracefully. */
export type PrimaryOrder =
  | { readonly type: "geoproxy:cancel"; readonly processId: number; readonly secretKey: string }
  | { readonly type: "geoproxy:stop" };

type Fields = Readonly<Record<string, unknown>>;

function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null;
}

/** A CancelRequest's process id is an Int32; its secret 4 to 256 bytes. */
function isCancelKey(message: Fields): boolean {
  const { processId, secretKey } = message;
  return (
    Number.isInteger(processId) &&
    (processId as number) >= -0x80000000 &&
    (processId as number) <= 0x7fffffff &&
    typeof secretKey === "string" &&
    /^(?:[0-9a-f]{2}){4,256}$/.test(secretKey)
  );
}

/** A worker's message, or null for anything else (which the primary ignores). */
export function readWorkerReport(message: unknown): WorkerReport | null {
  if (!isFields(message)) return null;
  switch (message["type"]) {
    case "geoproxy:listening": {
      const { port, node } = message;
      return Number.isInteger(port) && typeof node === "string"
        ? { type: "geoproxy:listening", port: port as number, node }
        : null;
    }
    case "geoproxy:cancel": {
      const worker = message["worker"];
      if (!Number.isInteger(worker) || (worker as number) < 1 || (worker as number) > MAX_WORKERS)
        return null;
      if (!isCancelKey(message)) return null;
      return {
        type: "geoproxy:cancel",
        worker: worker as number,
        processId: message["processId"] as number,
        secretKey: message["secretKey"] as string,
      };
    }
    default:
      return null;
  }
}

/** The primary's message, or null for anything else (which a worker ignores). */
export function readPrimaryOrder(message: unknown): PrimaryOrder | null {
  if (!isFields(message)) return null;
  switch (message["type"]) {
    case "geoproxy:stop":
      return { type: "geoproxy:stop" };
    case "geoproxy:cancel":
      return isCancelKey(message)
        ? {
            type: "geoproxy:cancel",
            processId: message["processId"] as number,
            secretKey: message["secretKey"] as string,
          }
        : null;
    default:
      return null;
  }
}
