// A stand-in for postgres.js's tests/test.js with the same API (t, nt, ot, t.timeout) and the same
// order and per-test timeout, except that a failing test does not stop the rest. Every result is
// appended to $PGJS_RESULTS as {"name","status","error"}; the process exits 3 s after the last test
// (a failed test can leave connections open).
import fs from "node:fs";
import util from "node:util";

const out = process.env.PGJS_RESULTS;
let only = false;
let promise = Promise.resolve();
let queued = 0,
  done = 0,
  ignored = 0;
const names = new Map();
// PGJS_ONLY_FILE: run only the tests named there, one name a line (to rerun failures in isolation).
const selected = process.env.PGJS_ONLY_FILE
  ? new Set(fs.readFileSync(process.env.PGJS_ONLY_FILE, "utf8").split("\n").filter(Boolean))
  : null;
// An error nobody catches (upstream, it ends the run) is printed with the test that was running and
// counted, but does not fail that test: it can come from a connection an earlier test left retrying
// in the background (postgres.js's subscribe() reconnects forever). A test it really breaks then
// fails on its own timeout. The run goes on, so one test cannot hide the rest.
let running = null;
const uncaught = (err) => {
  const e = err instanceof Error ? err : new Error(util.inspect(err));
  process.stdout.write(`\nuncaught during ${running ?? "(between tests)"}: ${e.code ?? ""} ${e.message}\n`);
  if (process.env.PGJS_UNCAUGHT)
    fs.appendFileSync(
      process.env.PGJS_UNCAUGHT,
      JSON.stringify({ test: running, code: e.code, message: e.message }) + "\n",
    );
};
process.on("uncaughtException", uncaught);
process.on("unhandledRejection", uncaught);
const record = (name, status, error) => {
  const n = (names.get(name) ?? 0) + 1;
  names.set(name, n);
  const row = { name: n === 1 ? name : `${name} #${n}`, status, ...(error ? { error } : {}) };
  if (out) fs.appendFileSync(out, JSON.stringify(row) + "\n");
  process.stdout.write(status === "pass" ? "✅" : `\n⛔️ ${row.name}: ${error}\n`);
};

export const nt = () => ignored++;
export const ot = (...rest) => {
  only = true;
  return test(true, ...rest);
};
export const t = (...rest) => test(false, ...rest);
t.timeout = 5;

async function test(o, name, options, fn) {
  if (typeof options !== "object") {
    fn = options;
    options = {};
  }
  await 1;
  if (only && !o) return;
  if (selected && !selected.has(name)) return;
  queued++;
  promise = promise
    .then(() => {
      let timer;
      return Promise.race([
        new Promise((_, reject) => {
          running = name;
          timer = setTimeout(() => reject("Timed out"), (options.timeout || t.timeout) * 1000);
        }),
        Promise.resolve().then(fn),
      ])
        .then(async (x) => {
          clearTimeout(timer);
          if (!Array.isArray(x)) throw new Error("Test should return result array");
          const [expected, got] = await Promise.all(x);
          if (expected !== got) throw new Error(util.inspect(expected) + " != " + util.inspect(got));
          record(name, "pass");
        })
        .catch((err) => {
          clearTimeout(timer);
          record(
            name,
            "fail",
            err instanceof Error ? `${err.code ? err.code + " " : ""}${err.message}` : util.inspect(err),
          );
        });
    })
    .then(() => {
      if (++done === queued) {
        console.log(`\nPGJS_SUMMARY total=${done} ignored=${ignored}`);
        setTimeout(() => process.exit(0), 3000).unref?.();
        setTimeout(() => process.exit(0), 3000);
      }
    });
}
