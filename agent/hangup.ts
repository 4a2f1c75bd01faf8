// What SIGHUP does to `cortex-agent run` (DECISIONS I21). Without a handler Node ends the
// process on SIGHUP, and systemd does not restart a service that a SIGHUP ended (Restart=
// on-failure counts SIGHUP, SIGINT, SIGTERM and SIGPIPE as a clean end): one `pkill -HUP`
// meant for another daemon, or `kill -HUP` from habit, stopped shipping until someone noticed.
// Log shippers take SIGHUP as "read your configuration again", so the agent does what it can:
// it reads agent.json again and says what it found. Nothing in agent.json is applied live (the
// server URLs, the CA, the caps and file.tail's paths are taken at start); what changed is named
// as waiting for the next start. The sources, filters and intervals come from the server and
// change live through `cortex-server agent config` without any signal.

import { changedKeys } from '../common/process.js';
import type { Logger } from './log.js';
import { readAgentSettings, unknownAgentSettingsKeys, unknownAgentSettingsText, type AgentSettings } from './state-dir.js';

/**
 * Reads agent.json in `stateDir` again and logs the outcome against `inForce` (the settings the
 * running agent started with). Never throws: the agent goes on whatever the file says.
 */
export async function reportHangup(stateDir: string, inForce: AgentSettings, logger: Logger): Promise<void> {
  let next: AgentSettings | null;
  try {
    next = await readAgentSettings(stateDir);
  } catch (err) {
    logger.error({ signal: 'SIGHUP', err: (err as Error).message }, 'agent.json read again (SIGHUP) and refused; the agent goes on with the settings it started with — mend the file before the next start');
    return;
  }
  if (next === null) {
    logger.error({ signal: 'SIGHUP', state_dir: stateDir }, `SIGHUP: ${stateDir} has no agent.json any more; the agent goes on with the settings it started with, but will not start again without it — run "cortex-agent enroll" or put the file back`);
    return;
  }
  const unknown = unknownAgentSettingsKeys(next);
  if (unknown.length > 0) logger.warn({ signal: 'SIGHUP', unknown_keys: unknown }, unknownAgentSettingsText(unknown));
  const keys = changedKeys(inForce, next);
  if (keys.length > 0) {
    logger.warn({ signal: 'SIGHUP', settings: keys }, `agent.json read again (SIGHUP): ${keys.join(', ')} changed, which take effect at the next start (systemctl restart cortex-agent); the agent goes on`);
    return;
  }
  logger.info({ signal: 'SIGHUP' }, 'SIGHUP: agent.json unchanged, nothing to reload (sources, filters and intervals come from the server: cortex-server agent config); the agent goes on');
}
