import { describe, expect, it } from 'vitest';
import { createCapturingLogger, scrubSecret } from '../../agent/log.js';

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
