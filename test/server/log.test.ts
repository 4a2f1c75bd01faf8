import { describe, expect, it } from 'vitest';
import { generateToken } from '../../server/auth/tokens.js';
import { createCapturingLogger } from '../../server/log.js';

describe('logger', () => {
  it('writes one JSON object per line with level, time and message', () => {
    const { logger, records } = createCapturingLogger({ name: 'server' });
    logger.info({ host_id: 'abc' }, 'hello accepted');
    const [r] = records();
    expect(r).toMatchObject({ level: 'info', name: 'server', host_id: 'abc', msg: 'hello accepted' });
    expect(typeof r?.['time']).toBe('string');
  });

  it('redacts tokens wherever the usual keys hold them', () => {
    const { logger, lines } = createCapturingLogger();
    const secrets = Array.from({ length: 8 }, () => generateToken());
    const [s0, s1, s2, s3, s4, s5, s6, s7] = secrets;
    logger.info({ token: s0 }, 'top');
    logger.info({ params: { token: s1, host_id: 'h' } }, 'one deep');
    logger.info({ frame: { params: { token: s2 } } }, 'two deep');
    logger.info({ result: { rotated_token: s3 } }, 'rotated');
    logger.info({ admin_token: s4, config: { admin_token: s5 } }, 'admin');
    logger.info({ req: { headers: { authorization: `Bearer ${s6}` } } }, 'http');
    logger.warn({ data: { a: { b: { token: s7 } } } }, 'three deep');
    expect(lines).toHaveLength(7);
    for (const line of lines) {
      for (const s of secrets) expect(line).not.toContain(s!);
    }
    expect(lines.join('\n')).toContain('[redacted]');
    expect(JSON.parse(lines[1]!)).toMatchObject({ params: { token: '[redacted]', host_id: 'h' } });
  });
});
