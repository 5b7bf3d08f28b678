/** pg_hba lines and roles for one login per authentication method. */
export const rolesHba = [
  "host all scram_user 127.0.0.1/32 scram-sha-256",
  "host all md5_user 127.0.0.1/32 md5",
  "host all clear_user 127.0.0.1/32 password",
];

export const rolesInitSql = [
  "SET password_encryption = 'scram-sha-256';",
  "CREATE ROLE scram_user LOGIN PASSWORD 'scram-secret';",
  "SET password_encryption = 'md5';",
  "CREATE ROLE md5_user LOGIN PASSWORD 'md5-secret';",
  "CREATE ROLE clear_user LOGIN PASSWORD 'clear-secret';",
].join(" ");
