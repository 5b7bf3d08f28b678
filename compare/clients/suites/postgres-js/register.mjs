// `node --import register.mjs tests/index.js`: resolves postgres.js's tests/test.js to harness.mjs
// (this kit's own implementation of the same t/nt/ot API), so every test runs even after one fails.
// Nothing in the postgres.js checkout is changed.
import { register } from "node:module";

register(new URL("./hooks.mjs", import.meta.url));
