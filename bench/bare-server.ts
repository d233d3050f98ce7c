/**
 * The yardstick for bench/api.ts: a bare node:http server answering constant JSON, the fastest a
 * Node HTTP service on this machine can be. Reads (and discards) request bodies like the API does.
 * Run as a child process: `tsx bench/bare-server.ts PORT`; prints `ready` once listening.
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const body = JSON.stringify({ status: 'PENDING', id: '3f2b8c1e-6a7d-4e59-9c0b-1d2e3f4a5b6c' });
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    response.end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(port, '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
