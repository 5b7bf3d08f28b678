/** PostgreSQL frontend/backend protocol 3.0: framing, messages, errors, SCRAM and MD5. */
export const packageName = "@geo/proto";
