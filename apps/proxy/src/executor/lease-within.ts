import type { Lease } from "@geo/pool";

/**
 * Checks out a lease with `acquire`, failing with `timedOut()` when none is at hand within
 * `timeoutMs`. Checking out can take a round trip of its own (a connection at the pool's settings
 * is reset first), so a lookup bounded by a deadline bounds this step too: a frozen region then
 * fails at the lookup's deadline with its message, not later with the reset's. A lease that comes
 * after the deadline is discarded: the statement that wanted it has given up.
 */
export function leaseWithin(
  acquire: () => Promise<Lease>,
  timeoutMs: number,
  timedOut: () => Error,
): Promise<Lease> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(timedOut());
    }, timeoutMs);
    acquire().then(
      (lease) => {
        if (late) {
          lease.discard("checked out after its lookup gave up");
          return;
        }
        clearTimeout(timer);
        resolve(lease);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!late) reject(error);
      },
    );
  });
}
