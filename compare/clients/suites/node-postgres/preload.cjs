// Loaded with `node -r` into each node-postgres integration test file: wraps the suite runner of
// packages/pg/test/suite.js (without changing it) so that every check's outcome is appended as one
// JSON line to $NP_EVENTS. The file's own output is untouched.
const Module = require("node:module");
const fs = require("node:fs");
const path = require("node:path");
const events = process.env.NP_EVENTS;
const file = process.env.NP_FILE;
const seen = new Map();
let current = null;
const emit = (status, error) => {
  if (!current) return;
  fs.appendFileSync(events, JSON.stringify({ name: `${file} :: ${current}`, status, error }) + "\n");
  current = null;
};
const load = Module._load;
let wrapped = false;
Module._load = function (request, parent, isMain) {
  const exported = load.apply(this, arguments);
  if (!wrapped && /(^|\/)suite(\.js)?$/.test(request)) {
    let resolved = "";
    try {
      resolved = Module._resolveFilename(request, parent, isMain);
    } catch {}
    if (resolved.endsWith(path.join("test", "suite.js")) && typeof exported === "function") {
      wrapped = true;
      const run = exported.prototype.run;
      exported.prototype.run = function (test, cb) {
        const n = (seen.get(test.name) ?? 0) + 1;
        seen.set(test.name, n);
        current = n === 1 ? test.name : `${test.name} #${n}`;
        if (!test.action) {
          emit("skip");
          return run.call(this, test, cb);
        }
        const testRun = test.run;
        test.run = (done) =>
          testRun.call(test, (err) => {
            emit(err ? "fail" : "pass", err ? String((err && err.stack) || err) : undefined);
            done(err);
          });
        return run.call(this, test, cb);
      };
    }
  }
  return exported;
};
process.on("exit", (code) =>
  emit("fail", `process exited with code ${code} while the check was running (timeout or uncaught error)`),
);
