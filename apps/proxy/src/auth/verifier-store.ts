import type { StoredCredential } from "./stored-credential.js";

/** Asks the home region for a role's stored password; null when the role has none (or no such role). */
export type VerifierLookup = (role: string) => Promise<StoredCredential | null>;

export interface VerifierStoreOptions {
  /** Roles from `[auth] users`, checked first and never looked up. */
  readonly configured: ReadonlyMap<string, StoredCredential>;
  /** Absent: roles outside the configuration have no verifier. */
  readonly lookup?: VerifierLookup | undefined;
  /** How long an answer (a verifier or its absence) is kept. */
  readonly ttlMs: number;
  /** Entries kept at most; the oldest go first. */
  readonly maxEntries?: number | undefined;
  /** Milliseconds; injected by tests. */
  readonly now?: (() => number) | undefined;
}

interface Entry {
  readonly credential: StoredCredential | null;
  readonly expires: number;
}

/**
 * The verifiers logins are checked against: the configuration's, then the home region's with a
 * short-lived cache. Absence is cached too, so probing unknown role names costs the home region
 * one query per name and TTL, and concurrent logins for one role share one query.
 */
export class VerifierStore {
  private readonly cache = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<StoredCredential | null>>();
  private readonly now: () => number;
  private readonly maxEntries: number;

  constructor(private readonly options: VerifierStoreOptions) {
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** The role's credential, or null: unknown, or without a password the proxy can check. */
  async get(role: string): Promise<StoredCredential | null> {
    const configured = this.options.configured.get(role);
    if (configured !== undefined) return configured;
    const lookup = this.options.lookup;
    if (lookup === undefined) return null;
    const cached = this.cache.get(role);
    if (cached !== undefined && cached.expires > this.now()) return cached.credential;
    const pending = this.inFlight.get(role);
    if (pending !== undefined) return pending;
    const asked = lookup(role)
      .then((credential) => {
        this.remember(role, credential);
        return credential;
      })
      .finally(() => this.inFlight.delete(role));
    this.inFlight.set(role, asked);
    return asked;
  }

  /** Drops every cached answer (after a password change, say). */
  clear(): void {
    this.cache.clear();
  }

  private remember(role: string, credential: StoredCredential | null): void {
    if (this.options.ttlMs <= 0) return;
    this.cache.delete(role);
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(role, { credential, expires: this.now() + this.options.ttlMs });
  }
}
