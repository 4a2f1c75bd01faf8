// DIR/config.json: the config last in force, for the next start (DECISIONS F9).
//
// The server sends the agent its config at each hello and in config.update; nothing else tells
// the agent what to read. Without a copy, an agent started while its servers were out of reach
// (a host rebooted during an outage, a network not up yet) read no log at all until one answered:
// what its custom and docker sources printed meanwhile was never read, and files rotated twice
// in that time were gone. The copy is written (atomically, durably, 0600) whenever another config
// comes in force, and put in force at start until the server's arrives.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeIssues, toIssues, validateAgentConfig, type AgentConfig } from '@cortex/agent-protocol';
import { unlinkDurable, writeFileAtomic } from './atomic-file.js';
import type { Logger } from './log.js';

export const CONFIG_FILE = 'config.json';

/** The file's content: the config and when it came in force. */
interface StoredConfig {
  config: AgentConfig;
  applied_at: string;
}

export class ConfigStore {
  private readonly path: string;
  /** The JSON of the config last written (or read): an unchanged config is not written again. */
  private lastJson: string | null = null;
  /** Writes run one after the other, the newest config last. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    stateDir: string,
    private readonly log: Logger,
  ) {
    this.path = join(stateDir, CONFIG_FILE);
  }

  /**
   * The stored config, or null: none stored yet, or a file that does not hold a valid config
   * (said in the log; the agent then waits for the server's, as without a copy).
   */
  read(): AgentConfig | null {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn({ path: this.path, err: (err as Error).message }, 'cannot read the stored config: waiting for the server\'s');
      return null;
    }
    let stored: Partial<StoredConfig>;
    try {
      stored = JSON.parse(text) as Partial<StoredConfig>;
    } catch (err) {
      this.log.warn({ path: this.path, err: (err as Error).message }, 'the stored config is not JSON: ignored, waiting for the server\'s');
      return null;
    }
    const config = stored?.config;
    if (!validateAgentConfig(config)) {
      this.log.warn({ path: this.path, problems: describeIssues(toIssues(validateAgentConfig.errors)) }, 'the stored config is not a valid config: ignored, waiting for the server\'s');
      return null;
    }
    this.lastJson = JSON.stringify(config);
    return config;
  }

  /** Keeps `config` for the next start (unless it is the one stored). Failures are logged: the agent goes on. */
  store(config: AgentConfig): Promise<void> {
    const json = JSON.stringify(config);
    if (json === this.lastJson) return this.writing;
    this.lastJson = json;
    const text = `${JSON.stringify({ config, applied_at: new Date().toISOString() } satisfies StoredConfig)}\n`;
    this.writing = this.writing.then(() =>
      writeFileAtomic(this.path, text).catch((err: unknown) => {
        this.lastJson = null; // written again with the next config
        this.log.warn({ path: this.path, err: (err as Error).message }, 'cannot store the config for the next start');
      }),
    );
    return this.writing;
  }

  /** Resolves once every write started has ended. */
  settled(): Promise<void> {
    return this.writing;
  }

  /** Writes the config last read or stored back when its file is gone (buffer.db rescued, H25); true when written. */
  async restore(): Promise<boolean> {
    await this.writing;
    if (this.lastJson === null || existsSync(this.path)) return false;
    const config = JSON.parse(this.lastJson) as AgentConfig;
    this.lastJson = null;
    await this.store(config);
    return existsSync(this.path);
  }

  /** Forgets the stored config (the host was revoked). */
  async forget(): Promise<void> {
    await this.writing;
    this.lastJson = null;
    await unlinkDurable(this.path).catch(() => false);
  }
}
