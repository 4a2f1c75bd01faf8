// A worker process: one Pool of simulated agents, driven by the coordinator (./fleet.ts)
// over the Node IPC channel. Started by the coordinator only (it needs the channel).
import type { Identity } from './identities.js';
import { Pool, type PoolSettings, type PoolSnapshot } from './pool.js';
import type { AgentInfo } from './sim-agent.js';

/** Coordinator → worker. */
export type ToWorker =
  | { type: 'start'; settings: PoolSettings; identities: Identity[] }
  | { type: 'snapshot'; id: number }
  | { type: 'inspect'; id: number; host_id: string }
  | { type: 'rate'; id: number; rate: number }
  | { type: 'reset-loop-delay'; id: number }
  | { type: 'stop'; id: number; drainMs: number };

/** Worker → coordinator. */
export type FromWorker =
  | { type: 'started' }
  | { type: 'failed'; message: string }
  | { type: 'reply'; id: number; snapshot?: PoolSnapshot; info?: AgentInfo | null };

function send(msg: FromWorker): void {
  process.send?.(msg);
}

if (process.send === undefined) {
  process.stderr.write('cortex-fleet worker: started without an IPC channel; run cortex-fleet instead\n');
  process.exit(2);
}

let pool: Pool | null = null;

process.on('message', (raw: unknown) => {
  const msg = raw as ToWorker;
  switch (msg.type) {
    case 'start':
      try {
        pool = new Pool(msg.settings, msg.identities);
      } catch (err) {
        send({ type: 'failed', message: (err as Error).message });
        return;
      }
      send({ type: 'started' });
      void pool.start();
      return;
    case 'snapshot':
      if (pool) send({ type: 'reply', id: msg.id, snapshot: pool.snapshot() });
      return;
    case 'inspect':
      send({ type: 'reply', id: msg.id, info: pool?.inspect(msg.host_id) ?? null });
      return;
    case 'rate':
      pool?.setRate(msg.rate);
      send({ type: 'reply', id: msg.id });
      return;
    case 'reset-loop-delay':
      pool?.resetLoopDelay();
      send({ type: 'reply', id: msg.id });
      return;
    case 'stop':
      void (async () => {
        const snapshot = pool ? await pool.stop(msg.drainMs) : undefined;
        send({ type: 'reply', id: msg.id, ...(snapshot ? { snapshot } : {}) });
        process.disconnect?.();
      })();
      return;
  }
});

// Ctrl-C reaches the whole process group: the coordinator decides when the agents stop (it
// closes them with final_seq and collects the last snapshot).
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

// The coordinator went away (killed): nothing left to report to.
process.on('disconnect', () => {
  void (pool?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
});
