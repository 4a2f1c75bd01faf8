// What a session's peer observed besides normal results (generated runtime PeerEvent): log
// lines and frame counters. Late probe answers (their caller already got -32012) are told
// apart from unknown ids by the connection's set of expired probe ids.
import type { PeerEvent, RpcId } from '@cortex/agent-protocol';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import { loggableId, peerValue } from './peer-text.js';

export interface PeerEventScope {
  readonly logger: Logger;
  readonly metrics: ServerMetrics;
  readonly host_id: string | undefined;
  readonly address: string;
  /** Removes and reports an id whose probe.request already timed out. */
  expiredProbe(id: RpcId): boolean;
}

export function onPeerEvent(e: PeerEvent, s: PeerEventScope): void {
  const log = s.logger;
  switch (e.type) {
    case 'handler_error':
      log.error({ host_id: s.host_id, method: e.method, err: String(e.error) }, 'handler failed');
      break;
    case 'invalid_params':
      if (e.id !== undefined) s.metrics.framesOut.labels(e.method).inc();
      // issue paths name the frame's own property names: peer text (DECISIONS H65)
      log.info({ host_id: s.host_id, method: e.method, issues: peerValue(e.issues.slice(0, 5)) }, e.id === undefined ? 'malformed notification dropped' : 'invalid params (-32602)');
      break;
    case 'unknown_response':
      if (e.id !== null && s.expiredProbe(e.id)) {
        s.metrics.probeLateAnswers.inc();
        s.metrics.framesIn.labels('probe.response').inc();
        log.info({ host_id: s.host_id, id: e.id }, 'late probe answer dropped (the caller already got -32012)');
      } else log.info({ host_id: s.host_id, id: loggableId(e.id) }, 'response with an unknown id dropped');
      break;
    case 'rejected':
    case 'invalid_request':
    case 'parse_error':
      s.metrics.framesOut.labels(e.type === 'rejected' ? e.method : '(error)').inc();
      log.debug({ host_id: s.host_id, event: e.type }, 'peer event');
      break;
    case 'notification_dropped':
      // a request (logs.push, metrics.push) sent without an id: nothing can answer it, so its
      // sender learns nothing — a third-party agent's author finds it here (before: debug only)
      log.info({ host_id: s.host_id, method: e.method, reason: e.reason }, `${e.method} sent without an id dropped, nothing done: send it as a request (with an id) to get its answer`);
      break;
    case 'binary_frame':
      log.info({ host_id: s.host_id, address: s.address }, 'binary frame: closing 1003');
      break;
    default:
      log.debug({ host_id: s.host_id, event: e.type }, 'peer event');
  }
}
