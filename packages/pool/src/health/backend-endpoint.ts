/** The part a backend plays in its region's topology. */
export const BackendRole = {
  primary: "primary",
  replica: "replica",
} as const;
export type BackendRole = (typeof BackendRole)[keyof typeof BackendRole];

/** One backend server the health monitor watches, as the topology names it. */
export interface BackendEndpoint {
  readonly region: string;
  readonly role: BackendRole;
  readonly host: string;
  readonly port: number;
  /** Where the probe connection logs in. */
  readonly database: string;
  readonly user: string;
  readonly password?: string | undefined;
}

/** `host:port`, the name DRAIN / UNDRAIN and SHOW HEALTH use for a backend. */
export function endpointAddress(endpoint: { readonly host: string; readonly port: number }): string {
  return `${endpoint.host}:${endpoint.port}`;
}
