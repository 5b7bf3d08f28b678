import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Several files start PostgreSQL servers; one at a time suits a 2-core machine.
    fileParallelism: false,
  },
});
