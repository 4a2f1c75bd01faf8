// Library entry point: run one agent instance in-process (tests and benchmarks run
// many in one process).
//
//   const agent = await startAgent({ stateDir, serverUrl, hostId, token? , ... });
//   agent.ingest([{ ts, severity: 'info', message: 'hi', source: 'custom:demo' }]);
//   await agent.waitForAck(agent.status().next_seq - 1);
//   await agent.stop();
//
// serverUrl(s)/hostId/allowInsecure/caFile default to what `enroll` wrote to the state dir
// (several servers: each connection attempt takes the next of a shuffled order, server-list.ts).
// Log sources: the real tailers of agent/sources (sourceFactories(): file, journald and
// whatever else that module implements) unless `sourceFactories` is given ([] = only the
// in-process custom source, agent.ingest()). Probes: every built-in probe; file.tail may
// read below agent.json's `probe_file_tail_paths` (default ["/var/log"]). A custom source of
// the server's config runs only what agent.json's `custom_commands` lists and listens only at
// `custom_socket_paths` (default none: DECISIONS H37).

import { Agent, type AgentOptions } from './agent.js';
import { sourceFactories } from './sources/index.js';
import { createLogger } from './log.js';
import { checkServerUrl } from './socket.js';
import { ensureStateDir, readAgentSettings, readHostId, settingsServerUrls } from './state-dir.js';

export { Agent, AGENT_VERSION, DEFAULT_CONFIG, DEFAULT_PROBE_FILE_TAIL_PATHS, authErrorMessage, type AgentOptions, type AgentStatus, type IngestOptions } from './agent.js';
export { enroll, EnrollError, type EnrollOptions, type EnrollResult } from './enroll.js';
export { BasicSourceManager, sourceKey, type SourceManager, type SourceFactory, type RunningSource, type SourceStatus, type AgentSink } from './sources.js';
export { DurableBuffer, readBufferSnapshot } from './buffer/buffer.js';
export { BufferStorageError } from './buffer/errors.js';
export { Backoff } from './backoff.js';
export { createLogger, createCapturingLogger } from './log.js';
export { checkServerUrl, openSocket, UpgradeError } from './socket.js';
export { ServerList } from './server-list.js';
export { readStatusFile, type StatusFile } from './status-file.js';
export { sourceFactories, createSourceManager, IMPLEMENTED_KINDS as IMPLEMENTED_SOURCE_KINDS } from './sources/index.js';
export { createProbeRegistry, BUILTIN_PROBES, type ProbeRegistry, type ProbeRegistryOptions, type ProbeDefinition, type ProbeContext, type ProbeRunResult } from './probes/index.js';

export type StartAgentOptions = Omit<AgentOptions, 'serverUrl' | 'hostId'> & {
  /** One server; default: agent.json's servers (server_urls, or server_url). */
  serverUrl?: string;
  hostId?: string;
  /** Poll interval of the default file sources (default 250 ms). */
  sourcePollMs?: number;
};

export class AgentConfigError extends Error {
  override readonly name = 'AgentConfigError';
}

export async function startAgent(options: StartAgentOptions): Promise<Agent> {
  await ensureStateDir(options.stateDir);
  // agent.json also carries probe_file_tail_paths; with an explicit serverUrl(s) a missing or bad file is not an error.
  const explicit = options.serverUrl !== undefined || (options.serverUrls !== undefined && options.serverUrls.length > 0);
  const settings = !explicit ? await readAgentSettings(options.stateDir) : await readAgentSettings(options.stateDir).catch(() => null);
  const serverUrls =
    options.serverUrls !== undefined && options.serverUrls.length > 0
      ? [...options.serverUrls]
      : options.serverUrl !== undefined
        ? [options.serverUrl]
        : settings !== null
          ? settingsServerUrls(settings)
          : [];
  const serverUrl = serverUrls[0];
  if (serverUrl === undefined) throw new AgentConfigError(`${options.stateDir} has no agent.json; enroll the agent first`);
  const hostId = options.hostId ?? (await readHostId(options.stateDir));
  if (hostId === null) throw new AgentConfigError(`${options.stateDir} has no host_id; enroll the agent first`);
  const allowInsecure = options.allowInsecure ?? settings?.allow_insecure ?? false;
  for (const url of serverUrls) {
    const problem = checkServerUrl(url, allowInsecure);
    if (problem !== null) throw new AgentConfigError(problem);
  }
  const { sourcePollMs, ...agentOptions } = options;
  const logger = options.logger ?? createLogger();
  const agent = new Agent({
    ...agentOptions,
    logger,
    sourceFactories:
      options.sourceFactories ??
      sourceFactories({
        logger: logger.child({ component: 'sources' }),
        ...(sourcePollMs !== undefined ? { pollMs: sourcePollMs } : {}),
        // What the server may make a custom source run or listen at: only what this host allows (DECISIONS H37).
        customCommands: settings?.custom_commands ?? [],
        customSocketPaths: settings?.custom_socket_paths ?? [],
      }),
    // (also with probes: { extraProbes } from a site-specific build; a registry given whole ignores it)
    ...(options.probeFileTailPaths === undefined && settings?.probe_file_tail_paths !== undefined
      ? { probeFileTailPaths: settings.probe_file_tail_paths }
      : {}),
    serverUrl,
    serverUrls,
    hostId,
    allowInsecure,
    caFile: options.caFile ?? settings?.ca_file ?? null,
    ...(options.proxy === undefined && settings?.proxy !== undefined ? { proxy: settings.proxy } : {}),
    bufferOptions: options.bufferOptions ?? {
      ...(settings?.buffer_soft_cap_bytes ? { softCapBytes: settings.buffer_soft_cap_bytes } : {}),
      ...(settings?.buffer_hard_cap_bytes ? { hardCapBytes: settings.buffer_hard_cap_bytes } : {}),
    },
  });
  agent.start();
  return agent;
}
