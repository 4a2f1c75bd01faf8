import { EventEmitter } from 'node:events';
import { openSync } from 'node:fs';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createCapturingLogger, scrubSecret } from '../../agent/log.js';
import { TokenKeeper } from '../../agent/token-store.js';
import { LOG_HOLD_BYTES, keepLogging } from '../../common/log-destination.js';

const TOKEN = 'c2VjcmV0LXRva2VuLW9wYXF1ZS1iYXNlNjR1cmwtMzJieXRlcw';

describe('logger', () => {
  it('writes one JSON object per line with level, time and message', () => {
    const { logger, lines } = createCapturingLogger('info');
    logger.info({ queue_depth: 3 }, 'buffer flushed');
    logger.debug('not at this level');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'buffer flushed', queue_depth: 3, name: 'cortex-agent' });
    expect(typeof lines[0]!.time).toBe('string');
  });

  it('redacts token fields at any nesting depth up to three', () => {
    const { logger, raw } = createCapturingLogger();
    logger.info({ token: TOKEN }, 'top');
    logger.info({ params: { token: TOKEN, host_id: 'h' } }, 'hello');
    logger.info({ result: { rotated_token: TOKEN } }, 'rotated');
    logger.info({ frame: { params: { token: TOKEN } } }, 'deep');
    logger.info({ req: { headers: { authorization: `Bearer ${TOKEN}` } } }, 'headers');
    expect(raw).toHaveLength(5);
    for (const line of raw) {
      expect(line).not.toContain(TOKEN);
    }
    expect(raw[1]).toContain('"host_id":"h"');
    expect(raw[1]).toContain('[redacted]');
  });

  it('scrubs a known secret out of foreign text', () => {
    expect(scrubSecret(`bad token ${TOKEN}!`, TOKEN)).toBe('bad token [redacted]!');
    expect(scrubSecret('nothing', null)).toBe('nothing');
  });
});

describe('a stderr that cannot be written (common/log-destination.ts, DECISIONS H28)', () => {
  /** A SonicBoom stand-in: writes fail while `failing` is set, as a synchronous SonicBoom's do (an 'error' event inside write()); held lines are written first once it works again. */
  class FlakySonic extends EventEmitter {
    failing: string | null = null;
    held: string[] = [];
    written: string[] = [];
    write(data: string): boolean {
      if (this.failing !== null) {
        if (this.held.join('').length + data.length > LOG_HOLD_BYTES) this.emit('drop', data);
        else this.held.push(data);
        this.emit('error', Object.assign(new Error('write failed'), { code: this.failing }));
        return false;
      }
      this.written.push(...this.held.splice(0), data);
      return true;
    }
  }

  it('takes the write errors, and after the first line written again says since when, which error, and what was dropped', () => {
    const sonic = new FlakySonic();
    const times = ['2026-12-05T10:00:00.000Z', '2026-12-05T10:05:00.000Z'];
    const dest = keepLogging(sonic, { name: 'cortex-agent' }, () => new Date(times.shift() ?? '2026-12-05T11:00:00.000Z'));
    dest.write('{"msg":"before"}\n');
    sonic.failing = 'ENOSPC';
    const big = `{"msg":"${'x'.repeat(400 * 1024)}"}\n`;
    expect(() => {
      for (let i = 0; i < 4; i++) dest.write(big); // 1.6 MiB: two are held, the third and fourth would pass 1 MiB
    }).not.toThrow();
    sonic.failing = null;
    dest.write('{"msg":"after"}\n');
    expect(sonic.written.slice(0, 4)).toEqual(['{"msg":"before"}\n', big, big, '{"msg":"after"}\n']);
    const notice = JSON.parse(sonic.written.at(-1)!) as Record<string, unknown>;
    expect(sonic.written).toHaveLength(5);
    expect(notice).toMatchObject({ level: 'warn', name: 'cortex-agent', log_write_error: 'ENOSPC', failing_since: '2026-12-05T10:00:00.000Z', dropped_lines: 2 });
    expect(String(notice.msg)).toContain('2 lines were dropped');
    dest.write('{"msg":"later"}\n');
    expect(sonic.written.at(-1)).toBe('{"msg":"later"}\n'); // said once
  });

  it('the real SonicBoom on /dev/full (ENOSPC on every write): no throw, at most 1 MiB held, the rest counted as dropped', () => {
    const sonic = pino.destination({ dest: openSync('/dev/full', 'w'), sync: true, maxLength: LOG_HOLD_BYTES });
    let dropped = 0;
    sonic.on('drop', () => dropped++);
    const logger = pino({}, keepLogging(sonic, { name: 'cortex-agent' }));
    const line = 'y'.repeat(1000);
    expect(() => {
      for (let i = 0; i < 3000; i++) logger.info({ i }, line); // ~3 MB of lines
    }).not.toThrow();
    expect(dropped).toBeGreaterThan(1000);
    expect(dropped).toBeLessThan(3000);
  });
});

describe('tokens the agent holds are cut out of every line (H52)', () => {
  it('in a message, a field of any name, nested error data; the token before a rotation too', () => {
    const { logger, raw } = createCapturingLogger();
    const keeper = new TokenKeeper('/nonexistent', undefined);
    keeper.token = TOKEN;
    logger.warn({ data: { reason: `server said ${TOKEN}` }, close_reason: TOKEN }, `connection lost (1000 ${TOKEN})`);
    const rotated = 'rotated-token-'.padEnd(44, 'r');
    keeper.token = rotated;
    logger.error({ err: `old ${TOKEN} new ${rotated}` }, 'refused');
    const text = raw.join('');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(rotated);
    expect(text.split('[redacted]').length - 1).toBe(5);
    expect(JSON.parse(raw[0]!)).toMatchObject({ msg: 'connection lost (1000 [redacted])', close_reason: '[redacted]', data: { reason: 'server said [redacted]' } });
  });
});
