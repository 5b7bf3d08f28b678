import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // A guard against hangs, not a measure: 2,000 statements take about 60 s on a quiet machine, far more on a loaded one.
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
