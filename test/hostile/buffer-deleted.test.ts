// buffer.db deleted or replaced under a running `cortex-agent run` (DECISIONS H25): SQLite went
// on writing into the deleted file, and at the next start the agent had no positions (its log
// files read again from their beginning, every line stored twice) — or, with the folder's
// other files gone too, no token to connect with. Now the agent stops, copies its open buffer
// back (writing back the identity files that went with it) and starts again on the copy; a
// buffer.db replaced by another file is left alone, the copy put beside it, and run exits 1.
import { appendFileSync, copyFileSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { cliAgent, storedMessages as stored } from '../agent/helpers/cli-agent.js';
import { until } from '../support/procs.js';

const { run, setUp: setUpWith } = cliAgent();
const setUp = () => setUpWith('a1\na2\na3\n');

describe('buffer.db deleted or replaced under the running agent (DECISIONS H25)', () => {
  it('deleted with every file of the state folder: the agent copies its buffer back, writes its identity back and goes on; nothing is read twice', async () => {
    const { server, dir, log } = await setUp();
    const token = readFileSync(join(dir, 'token'), 'utf8');
    const first = run(dir);
    await until('a1-a3 stored', () => stored(server).length === 3, 15_000);
    for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
    appendFileSync(log, 'b1\nb2\nb3\n');
    await until('buffer.db copied back', () => existsSync(join(dir, 'buffer.db')) && first.stderr().includes('starting again on the copied buffer'), 15_000);
    await until('b1-b3 stored', () => stored(server).length === 6, 15_000);
    expect(first.stderr()).toContain('"msg":"buffer.db was deleted while the agent ran: stopping, and copying what the agent holds (unsent entries, source positions) back before it starts again"');
    const rescued = first.stderr().split('\n').find((l) => l.includes('"rescued_to"'));
    expect(JSON.parse(rescued!)).toMatchObject({ level: 'error', rescued_to: join(dir, 'buffer.db'), restored: ['host_id', 'agent.json', 'token', 'config.json'] });
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(token);
    for (const f of ['buffer.db', 'token', 'host_id', 'agent.json', 'config.json']) expect(statSync(join(dir, f)).mode & 0o777, f).toBe(0o600);
    expect(first.child.exitCode).toBeNull();
    expect(first.stderr()).not.toContain(token);

    // The next start reads on from the stored position: nothing is sent twice.
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    appendFileSync(log, 'c1\n');
    const second = run(dir);
    await until('c1 stored', () => stored(server).length === 7, 15_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(stored(server)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'c1']);
  }, 60_000);

  it('replaced by another file: that file is left alone, the copy goes beside it with every position, and run exits 1 naming both', async () => {
    const { server, dir, log } = await setUp();
    const r = run(dir);
    await until('a1-a3 stored', () => stored(server).length === 3, 15_000);
    copyFileSync(join(dir, 'buffer.db'), join(dir, 'other.db'));
    const otherBytes = readFileSync(join(dir, 'other.db'));
    appendFileSync(log, 'b1\n');
    await until('b1 stored', () => stored(server).length === 4, 15_000);
    renameSync(join(dir, 'other.db'), join(dir, 'buffer.db'));
    expect(await r.exited).toBe(1);
    const copy = readdirSync(dir).find((f) => f.startsWith('buffer.db.rescued-'));
    expect(copy).toBeDefined();
    expect(r.stderr()).toContain(`error[E_BUFFER]: buffer.db was replaced while the agent ran (another file is there now); what the agent held was copied to ${join(dir, copy!)}`);
    expect(readFileSync(join(dir, 'buffer.db')).equals(otherBytes)).toBe(true);
    const b = DurableBuffer.open(join(dir, copy!));
    try {
      expect(b.getSourcePosition(`file:${log}`)).toMatchObject({ offset: statSync(log).size });
      expect(b.ackedSeq).toBe(4);
    } finally {
      b.close();
    }
  }, 60_000);
});
