// A path to PostgreSQL that fails once a chosen statement has gone through: for the tests of a
// connection lost in the middle of a command or of serve's start-up (test/server/cli-db-silent.pg.test.ts,
// test/server/serve-migration-lost.pg.test.ts).
import net from 'node:net';
import { FreezingRelay } from './freezing-relay.js';

/**
 * A TCP pass-through to PostgreSQL that watches what its clients send: the first message whose
 * text `trigger` accepts goes on to PostgreSQL, and then `then` runs — `{ freeze }` calls
 * `freeze` (the relay in front freezes, so PostgreSQL's answer is held there), 'reset'
 * drops PostgreSQL's answer and closes both sides of that connection.
 */
export class Tap {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  fired: string | undefined;
  port = 0;

  constructor(
    private readonly target: { host: string; port: number },
    private readonly trigger: (text: string) => boolean,
    private readonly then: 'reset' | { freeze: () => void },
  ) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          this.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      let cutNextAnswer = false;
      client.on('data', (d: Buffer) => {
        upstream.write(d);
        if (this.fired !== undefined) return;
        const text = d.toString('latin1');
        if (!this.trigger(text)) return;
        this.fired = text.replace(/[^\x20-\x7e]+/g, ' ').trim();
        if (this.then === 'reset') cutNextAnswer = true;
        else this.then.freeze();
      });
      upstream.on('data', (d: Buffer) => {
        if (!cutNextAnswer) return void client.write(d);
        client.resetAndDestroy();
        upstream.destroy();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A FreezingRelay in front of a Tap in front of PostgreSQL (tappedPath). */
export interface TappedPath {
  readonly tap: Tap;
  readonly relay: FreezingRelay;
  /** `direct` with its host and port replaced by the relay's. */
  readonly url: string;
  /** The relay's port (what messages name as HOST:PORT). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The --db URL that reaches the database of `direct` (a postgres:// URL) through relay → tap →
 * PostgreSQL; `then` runs once a message `trigger` accepts has reached PostgreSQL.
 */
export async function tappedPath(direct: string, trigger: (text: string) => boolean, then: 'freeze' | 'reset'): Promise<TappedPath> {
  const target = new URL(direct);
  const front: { relay?: FreezingRelay } = {}; // the tap freezes the relay made in front of it
  const tap = new Tap({ host: target.hostname, port: Number(target.port || 5432) }, trigger, then === 'reset' ? 'reset' : { freeze: () => front.relay?.freeze() });
  await tap.open();
  const relay = new FreezingRelay({ host: '127.0.0.1', port: tap.port });
  front.relay = relay;
  await relay.open();
  const url = new URL(direct);
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  return {
    tap,
    relay,
    url: url.toString(),
    port: relay.port,
    async close() {
      await relay.close();
      await tap.close();
    },
  };
}
