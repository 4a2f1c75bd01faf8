// A TCP relay to PostgreSQL that can freeze, for the tests of a database path that stops answering
// (test/server/health-frozen-db.pg.test.ts, test/server/frozen-network.pg.test.ts).
import net from 'node:net';

/**
 * A TCP relay to PostgreSQL whose path can freeze: frozen, it accepts connections and forwards
 * nothing either way (what arrives is held) and refuses or resets nothing; thawed, it delivers
 * what it held and goes on. `loseOpenConnections` models a path that comes back without the
 * flows it carried: each connection open now has its PostgreSQL side closed (PostgreSQL ends
 * those sessions) while its client side stays open and never hears anything again; connections
 * made afterwards pass.
 */
export class FreezingRelay {
  private server: net.Server | undefined;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket | undefined; lost: boolean }>();
  private frozen = false;
  private thawers: (() => void)[] = [];
  /** While set, what PostgreSQL sends reaches the client this many bytes every 100 ms (a slow link). */
  slowBytes: number | undefined;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      client.on('error', () => undefined);
      const pair = { client, upstream: undefined as net.Socket | undefined, lost: false };
      this.pairs.add(pair);
      client.on('close', () => {
        this.pairs.delete(pair);
        pair.upstream?.destroy();
      });
      const early: Buffer[] = [];
      const start = (): void => {
        if (client.destroyed) return;
        const upstream = net.connect(this.target.port, this.target.host);
        pair.upstream = upstream;
        upstream.on('error', () => undefined);
        upstream.on('close', () => {
          if (!pair.lost) client.destroy();
        });
        const forward = (from: net.Socket, to: net.Socket, d: Buffer): void => {
          if (pair.lost) return; // a lost flow: nothing goes through any more, nothing is said
          if (!this.frozen) to.write(d);
          else this.thawers.push(() => void (!pair.lost && !to.destroyed && to.write(d)));
        };
        // the slow link: PostgreSQL's bytes queued, and let through slowBytes at a time
        let slow: Buffer[] = [];
        let dripping: ReturnType<typeof setInterval> | undefined;
        const drip = (): void => {
          let budget = this.slowBytes ?? Infinity;
          while (slow.length > 0 && budget > 0) {
            const head = slow[0] as Buffer;
            const part = head.subarray(0, budget);
            forward(upstream, client, part);
            budget -= part.length;
            if (part.length === head.length) slow.shift();
            else slow[0] = head.subarray(part.length);
          }
          if (slow.length === 0) {
            clearInterval(dripping);
            dripping = undefined;
          }
        };
        client.on('data', (d: Buffer) => forward(client, upstream, d));
        upstream.on('data', (d: Buffer) => {
          if (this.slowBytes === undefined && slow.length === 0) return forward(upstream, client, d);
          slow.push(d);
          dripping ??= setInterval(drip, 100);
        });
        client.on('close', () => {
          clearInterval(dripping);
          slow = [];
        });
        for (const d of early.splice(0)) forward(client, upstream, d);
      };
      if (!this.frozen) start();
      else {
        // Held before the first byte: connected upstream once thawed, with what came meanwhile.
        const hold = (d: Buffer): void => void early.push(d);
        client.on('data', hold);
        this.thawers.push(() => {
          client.off('data', hold);
          start();
        });
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  freeze(): void {
    this.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    for (const f of this.thawers.splice(0)) f();
  }

  /** Every connection open now is lost for good (see the class comment); later ones pass. */
  loseOpenConnections(): void {
    for (const p of this.pairs) {
      p.lost = true;
      p.upstream?.destroy();
    }
  }

  /** Connections through the relay whose client side is open. */
  get connections(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    this.thaw();
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
