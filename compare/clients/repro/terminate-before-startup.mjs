// Repro: node-postgres client/quick-disconnect-tests.js (`connect(); end()` in one tick): the client
// writes Terminate ('X' 00 00 00 04) before its StartupMessage, so the first 4 bytes read as a
// startup packet length of 0x58000000. PostgreSQL logs "invalid length of startup packet" (COMMERROR,
// never sent) and closes the socket silently; a proxy that answers with an ErrorResponse makes
// node-postgres emit an unhandled 'error'.
//   node terminate-before-startup.mjs PORT [user] [database]
// Prints every message the server sends back until it closes.
import net from "node:net";

const [port, user = "postgres", database = "ci_db_test"] = process.argv.slice(2);
const kv = Buffer.from(`user\0${user}\0database\0${database}\0\0`);
const startup = Buffer.alloc(8 + kv.length);
startup.writeInt32BE(8 + kv.length, 0);
startup.writeInt32BE(196608, 4);
kv.copy(startup, 8);
const terminate = Buffer.from([0x58, 0, 0, 0, 4]);
const s = net.connect(Number(port), "127.0.0.1", () => s.write(Buffer.concat([terminate, startup])));
let buf = Buffer.alloc(0);
s.on("data", (d) => {
  buf = Buffer.concat([buf, d]);
  while (buf.length >= 5 && buf.length >= 1 + buf.readInt32BE(1)) {
    const type = String.fromCharCode(buf[0]),
      len = buf.readInt32BE(1),
      body = buf.subarray(5, 1 + len);
    const text =
      type === "E"
        ? body.toString().split("\0").filter(Boolean).join(" | ")
        : type === "R"
          ? `auth code ${body.readInt32BE(0)}`
          : `${len - 4} bytes`;
    console.log(`${type} ${text}`);
    buf = buf.subarray(1 + len);
  }
});
s.on("close", () => console.log("closed"));
s.on("error", (e) => console.log("socket error", e.code));
