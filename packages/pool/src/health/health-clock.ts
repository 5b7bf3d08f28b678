/** Time as the health monitor sees it; tests pass a fake one. */
export interface HealthClock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real time. Timers are unref'd: a monitor alone never keeps the process alive. */
export const systemClock: HealthClock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
