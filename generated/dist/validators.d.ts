/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import type { Validator } from './runtime/peer.js';
import type * as T from './types.js';

/** Validates a {@link T.AgentHeartbeatParams}. On failure `errors` lists what failed. */
export declare const validateAgentHeartbeatParams: Validator<T.AgentHeartbeatParams>;
/** Validates a {@link T.AgentHelloParams}. On failure `errors` lists what failed. */
export declare const validateAgentHelloParams: Validator<T.AgentHelloParams>;
/** Validates a {@link T.AgentHelloResult}. On failure `errors` lists what failed. */
export declare const validateAgentHelloResult: Validator<T.AgentHelloResult>;
/** Validates a {@link T.AgentShutdownParams}. On failure `errors` lists what failed. */
export declare const validateAgentShutdownParams: Validator<T.AgentShutdownParams>;
/** Validates a {@link T.ConfigUpdateParams}. On failure `errors` lists what failed. */
export declare const validateConfigUpdateParams: Validator<T.ConfigUpdateParams>;
/** Validates a {@link T.Severity}. On failure `errors` lists what failed. */
export declare const validateSeverity: Validator<T.Severity>;
/** Validates a {@link T.LogSource}. On failure `errors` lists what failed. */
export declare const validateLogSource: Validator<T.LogSource>;
/** Validates a {@link T.LogBatchEntry}. On failure `errors` lists what failed. */
export declare const validateLogBatchEntry: Validator<T.LogBatchEntry>;
/** Validates a {@link T.MetricSample}. On failure `errors` lists what failed. */
export declare const validateMetricSample: Validator<T.MetricSample>;
/** Validates a {@link T.ProbeOutput}. On failure `errors` lists what failed. */
export declare const validateProbeOutput: Validator<T.ProbeOutput>;
/** Validates a {@link T.AgentConfig}. On failure `errors` lists what failed. */
export declare const validateAgentConfig: Validator<T.AgentConfig>;
/** Validates a {@link T.AuthFailedData}. On failure `errors` lists what failed. */
export declare const validateAuthFailedData: Validator<T.AuthFailedData>;
/** Validates a {@link T.TokenRevokedData}. On failure `errors` lists what failed. */
export declare const validateTokenRevokedData: Validator<T.TokenRevokedData>;
/** Validates a {@link T.AgentVersionUnsupportedData}. On failure `errors` lists what failed. */
export declare const validateAgentVersionUnsupportedData: Validator<T.AgentVersionUnsupportedData>;
/** Validates a {@link T.UnknownHostData}. On failure `errors` lists what failed. */
export declare const validateUnknownHostData: Validator<T.UnknownHostData>;
/** Validates a {@link T.TokenRotationRequiredData}. On failure `errors` lists what failed. */
export declare const validateTokenRotationRequiredData: Validator<T.TokenRotationRequiredData>;
/** Validates a {@link T.BufferOverflowData}. On failure `errors` lists what failed. */
export declare const validateBufferOverflowData: Validator<T.BufferOverflowData>;
/** Validates a {@link T.PayloadTooLargeData}. On failure `errors` lists what failed. */
export declare const validatePayloadTooLargeData: Validator<T.PayloadTooLargeData>;
/** Validates a {@link T.ProbeUnavailableData}. On failure `errors` lists what failed. */
export declare const validateProbeUnavailableData: Validator<T.ProbeUnavailableData>;
/** Validates a {@link T.ProbeExecutionFailedData}. On failure `errors` lists what failed. */
export declare const validateProbeExecutionFailedData: Validator<T.ProbeExecutionFailedData>;
/** Validates a {@link T.ProbeTimeoutData}. On failure `errors` lists what failed. */
export declare const validateProbeTimeoutData: Validator<T.ProbeTimeoutData>;
/** Validates a {@link T.RetryAfterData}. On failure `errors` lists what failed. */
export declare const validateRetryAfterData: Validator<T.RetryAfterData>;
/** Validates a {@link T.InvalidParamsData}. On failure `errors` lists what failed. */
export declare const validateInvalidParamsData: Validator<T.InvalidParamsData>;
/** Validates a {@link T.JsonRpcMessage}. On failure `errors` lists what failed. */
export declare const validateJsonRpcMessage: Validator<T.JsonRpcMessage>;
/** Validates a {@link T.JsonRpcId}. On failure `errors` lists what failed. */
export declare const validateJsonRpcId: Validator<T.JsonRpcId>;
/** Validates a {@link T.JsonRpcRequest}. On failure `errors` lists what failed. */
export declare const validateJsonRpcRequest: Validator<T.JsonRpcRequest>;
/** Validates a {@link T.JsonRpcNotification}. On failure `errors` lists what failed. */
export declare const validateJsonRpcNotification: Validator<T.JsonRpcNotification>;
/** Validates a {@link T.JsonRpcSuccessResponse}. On failure `errors` lists what failed. */
export declare const validateJsonRpcSuccessResponse: Validator<T.JsonRpcSuccessResponse>;
/** Validates a {@link T.JsonRpcErrorObject}. On failure `errors` lists what failed. */
export declare const validateJsonRpcErrorObject: Validator<T.JsonRpcErrorObject>;
/** Validates a {@link T.JsonRpcErrorResponse}. On failure `errors` lists what failed. */
export declare const validateJsonRpcErrorResponse: Validator<T.JsonRpcErrorResponse>;
/** Validates a {@link T.LogsPushParams}. On failure `errors` lists what failed. */
export declare const validateLogsPushParams: Validator<T.LogsPushParams>;
/** Validates a {@link T.LogsPushResult}. On failure `errors` lists what failed. */
export declare const validateLogsPushResult: Validator<T.LogsPushResult>;
/** Validates a {@link T.MetricsPushParams}. On failure `errors` lists what failed. */
export declare const validateMetricsPushParams: Validator<T.MetricsPushParams>;
/** Validates a {@link T.MetricsPushResult}. On failure `errors` lists what failed. */
export declare const validateMetricsPushResult: Validator<T.MetricsPushResult>;
/** Validates a {@link T.ProbeRequestParams}. On failure `errors` lists what failed. */
export declare const validateProbeRequestParams: Validator<T.ProbeRequestParams>;
/** Validates a {@link T.ProbeRequestResult}. On failure `errors` lists what failed. */
export declare const validateProbeRequestResult: Validator<T.ProbeRequestResult>;
/** Validates a {@link T.ExecSystemctlStatusArgs}. On failure `errors` lists what failed. */
export declare const validateExecSystemctlStatusArgs: Validator<T.ExecSystemctlStatusArgs>;
/** Validates a {@link T.ExecSystemctlStatusOutput}. On failure `errors` lists what failed. */
export declare const validateExecSystemctlStatusOutput: Validator<T.ExecSystemctlStatusOutput>;
/** Validates a {@link T.FsDiskUsageArgs}. On failure `errors` lists what failed. */
export declare const validateFsDiskUsageArgs: Validator<T.FsDiskUsageArgs>;
/** Validates a {@link T.FsDiskUsageOutput}. On failure `errors` lists what failed. */
export declare const validateFsDiskUsageOutput: Validator<T.FsDiskUsageOutput>;
/** Validates a {@link T.SysUptimeArgs}. On failure `errors` lists what failed. */
export declare const validateSysUptimeArgs: Validator<T.SysUptimeArgs>;
/** Validates a {@link T.SysUptimeOutput}. On failure `errors` lists what failed. */
export declare const validateSysUptimeOutput: Validator<T.SysUptimeOutput>;
/** Validates a {@link T.SysOsReleaseArgs}. On failure `errors` lists what failed. */
export declare const validateSysOsReleaseArgs: Validator<T.SysOsReleaseArgs>;
/** Validates a {@link T.SysOsReleaseOutput}. On failure `errors` lists what failed. */
export declare const validateSysOsReleaseOutput: Validator<T.SysOsReleaseOutput>;
/** Validates a {@link T.ProcTopArgs}. On failure `errors` lists what failed. */
export declare const validateProcTopArgs: Validator<T.ProcTopArgs>;
/** Validates a {@link T.ProcTopOutput}. On failure `errors` lists what failed. */
export declare const validateProcTopOutput: Validator<T.ProcTopOutput>;
/** Validates a {@link T.NetListeningSocketsArgs}. On failure `errors` lists what failed. */
export declare const validateNetListeningSocketsArgs: Validator<T.NetListeningSocketsArgs>;
/** Validates a {@link T.NetListeningSocketsOutput}. On failure `errors` lists what failed. */
export declare const validateNetListeningSocketsOutput: Validator<T.NetListeningSocketsOutput>;
/** Validates a {@link T.JournalTailArgs}. On failure `errors` lists what failed. */
export declare const validateJournalTailArgs: Validator<T.JournalTailArgs>;
/** Validates a {@link T.JournalTailOutput}. On failure `errors` lists what failed. */
export declare const validateJournalTailOutput: Validator<T.JournalTailOutput>;
/** Validates a {@link T.FileTailArgs}. On failure `errors` lists what failed. */
export declare const validateFileTailArgs: Validator<T.FileTailArgs>;
/** Validates a {@link T.FileTailOutput}. On failure `errors` lists what failed. */
export declare const validateFileTailOutput: Validator<T.FileTailOutput>;
