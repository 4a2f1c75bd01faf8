// A TCP port free on 127.0.0.1 right now, for a child process (nginx, pgbouncer, a server) that
// must be given one: listen on port 0, read the port, close. Another process could take it in
// between; on loopback in a test run that has not been seen.
import { createServer, type AddressInfo } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
