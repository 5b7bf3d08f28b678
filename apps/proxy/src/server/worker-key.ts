import { MAX_WORKERS } from "@geo/core";

/**
 * With workers, the cancel key a worker issues names it: the high four bits of the secret's first
 * byte hold its index - 1 (so MAX_WORKERS is 16), the other 28 bits stay random. A CancelRequest
 * arrives on a new connection, which the cluster hands to any worker; that one reads the index and
 * has the primary pass the request on. The process id is left alone: a session with a backend of
 * its own still reports that backend's pid.
 */
const SHIFT = 4;

/** `secret` (4 random bytes or more) with worker `index` (1..MAX_WORKERS) written into it, in place. */
export function stampWorker(secret: Buffer, index: number): Buffer {
  if (!Number.isInteger(index) || index < 1 || index > MAX_WORKERS)
    throw new RangeError(`worker index ${index} is outside 1..${MAX_WORKERS}`);
  secret[0] = (((index - 1) << SHIFT) | ((secret[0] ?? 0) & 0x0f)) & 0xff;
  return secret;
}

/**
 * The worker a secret key names, 1..MAX_WORKERS; undefined for an empty key. Any bytes name some
 * worker: a forged key is sent on like a real one and matches nothing there.
 */
export function workerOfSecret(secret: Uint8Array): number | undefined {
  const first = secret[0];
  return first === undefined ? undefined : (first >> SHIFT) + 1;
}
