import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Several files start PostgreSQL servers; one at a time suits a 2-core machine. Two files need
    // it: demo.e2e binds the example's fixed ports (5433-5435, 6432) and memory.e2e bounds a child
    // proxy's RSS growth, which another file's load would blur.
    fileParallelism: false,
  },
});
