// A damaged row of buffer.db at run time (DECISIONS P22): before, readBatch threw `corrupt` for
// it every second and nothing after it was ever sent (a restart did not heal it: quick_check
// passes). Now the agent sets the row aside, sends every other entry, and says what was lost.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DAMAGED_ROWS_SUFFIX, DurableBuffer } from '../../agent/buffer/buffer.js';
import { readRecovery } from '../../agent/buffer/heal.js';
import { entries, makeAgent, stopAfterEach, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

const { agents, servers } = stopAfterEach();

describe('a damaged row in buffer.db', () => {
  it('is set aside: every other entry reaches the server, the log and status say which seqs were lost, and degraded ends once the server has acked past it', async () => {
    const dir = tempDir();
    const path = join(dir, 'buffer.db');
    const b = DurableBuffer.open(path);
    for (let i = 0; i < 3; i++) b.append(entries(10, `r${i}-`)); // rows 1..10, 11..20, 21..30
    b.close();
    const db = new Database(path);
    db.prepare("UPDATE entries SET json = replace(json, char(10), ' ') WHERE seq = 11").run(); // a damaged byte: the row no longer splits into its 10 entries
    db.close();

    const s = await FakeServer.start();
    servers.push(s);
    const { agent, logs } = await makeAgent(s.url, {}, dir);
    agents.push(agent);
    agent.start();
    await agent.waitForAck(30);
    const seqs = [...new Set(s.pushes.flatMap((p) => p.entries.map((e) => e.seq)))].sort((x, y) => x - y);
    expect(seqs).toEqual([...Array.from({ length: 10 }, (_, i) => i + 1), ...Array.from({ length: 10 }, (_, i) => i + 21)]);
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 'error', row_seq: 11, lost_from: 11, lost_to: 20, msg: expect.stringContaining('sending goes on after it') }));
    expect(logs.lines.filter((l) => String(l.msg).startsWith('cannot read the buffer'))).toEqual([]);
    expect(agent.status().degraded).toMatchObject({ kind: 'rows', lost_from: 11, lost_to: 20, moved_to: `${path}${DAMAGED_ROWS_SUFFIX}` });
    expect(readRecovery(dir)).toMatchObject({ kind: 'rows', lost_from: 11, lost_to: 20 });
    expect(existsSync(`${path}${DAMAGED_ROWS_SUFFIX}`)).toBe(true);
    expect(readFileSync(`${path}${DAMAGED_ROWS_SUFFIX}`, 'utf8')).toContain('"seq":11,"n":10');
    // acked past the next_seq of the moment: whole again
    agent.ingest(entries(1));
    await agent.waitForAck(31);
    expect(agent.status().degraded).toBeUndefined();
    expect(readRecovery(dir)).toBeNull();
  });
});
