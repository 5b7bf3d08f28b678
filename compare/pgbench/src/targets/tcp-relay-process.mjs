// The ceiling any Node.js proxy can reach on this machine: bytes piped both ways, nothing parsed.
import { connect, createServer } from "node:net";

const [listenPort, backendHost, backendPort] = process.argv.slice(2);

createServer((client) => {
  const backend = connect({ host: backendHost, port: Number(backendPort) });
  client.setNoDelay(true);
  backend.setNoDelay(true);
  const close = () => {
    client.destroy();
    backend.destroy();
  };
  client.on("error", close).on("close", close);
  backend.on("error", close).on("close", close);
  client.pipe(backend).pipe(client);
}).listen(Number(listenPort), "127.0.0.1");

process.on("SIGTERM", () => process.exit(0));
