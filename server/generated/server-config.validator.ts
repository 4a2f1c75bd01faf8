/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/* eslint-disable */
// @ts-nocheck -- ajv standalone code bundled by esbuild (JavaScript); typed by server-config.ts
var __getOwnPropNames = Object.getOwnPropertyNames;
var __commonJS = (cb, mod) => function __require() {
  try {
    return mod || (0, cb[__getOwnPropNames(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports;
  } catch (e) {
    throw mod = 0, e;
  }
};

// node_modules/ajv/dist/runtime/ucs2length.js
var require_ucs2length = /* @__PURE__ */ __commonJS({
  "node_modules/ajv/dist/runtime/ucs2length.js"(exports) {
    "use strict";
    Object.defineProperty(exports, "__esModule", { value: true });
    function ucs2length(str) {
      const len = str.length;
      let length = 0;
      let pos = 0;
      let value;
      while (pos < len) {
        length++;
        value = str.charCodeAt(pos++);
        if (value >= 55296 && value <= 56319 && pos < len) {
          value = str.charCodeAt(pos);
          if ((value & 64512) === 56320)
            pos++;
        }
      }
      return length;
    }
    exports.default = ucs2length;
    ucs2length.code = 'require("ajv/dist/runtime/ucs2length").default';
  }
});

// validator.js
var validateServerConfig = validate20;
var schema31 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/server-config.json", "title": "ServerConfig", "description": "The reference server's configuration file (`cortex-server serve --config FILE`). All keys optional; command-line flags override them.", "type": "object", "additionalProperties": false, "properties": { "listen": { "type": "string", "pattern": "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.\\-]+):[0-9]{1,5}$", "description": "HOST:PORT to listen on (default 127.0.0.1:3100)." }, "db": { "type": "string", "minLength": 1, "description": "SQLite database path, or a postgres:// (postgresql://) URL for PostgreSQL; any other URL scheme is refused (default $CORTEX_DB, then ./data/cortex.db)." }, "admin_token": { "type": "string", "minLength": 16, "maxLength": 256, "description": "Bearer token for the admin HTTP API. Secret: never logged." }, "tls_cert": { "type": "string", "minLength": 1, "description": "PEM certificate file: serve wss:// natively." }, "tls_key": { "type": "string", "minLength": 1, "description": "PEM private key file." }, "allow_insecure": { "type": "boolean", "description": "Allow a non-loopback listen address without TLS." }, "min_agent_version": { "type": "string", "pattern": "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$", "description": "Oldest agent_version accepted (semver precedence)." }, "required_protocol_version": { "type": "integer", "minimum": 1, "description": "Protocol floor: a hello with a lower protocol_version gets -32003." }, "default_agent_config": { "$ref": "defs.json#/$defs/AgentConfig", "description": "AgentConfig for hosts without their own." }, "max_batch_entries": { "type": "integer", "minimum": 1, "maximum": 1e3, "description": "Server cap on logs.push entries; more (up to 1000) is -32008." }, "ingest_queue_batches": { "type": "integer", "minimum": 16, "description": "Capacity of the ingest queue in batches of 1000 entries." }, "agent_rate_entries_per_s": { "type": "integer", "minimum": 1, "description": "Per-agent leaky bucket rate; burst is one second of it." }, "upgrades_per_minute": { "type": "integer", "minimum": 0, "description": "Upgrade attempts per client address per minute (0 disables)." }, "trusted_proxies": { "type": "array", "items": { "type": "string", "minLength": 1 }, "description": "Addresses or CIDR ranges whose X-Forwarded-For is trusted." }, "failed_hellos_before_throttle": { "type": "integer", "minimum": 0, "description": "From this many failed hellos (bad, revoked or stale token) of one client address within 10 minutes on, its upgrades get 429 for a doubling delay (1 s up to 5 min); loopback included. Default 5; 0 disables." }, "metrics_public": { "type": "boolean", "description": "Serve GET /metrics to every client (default false: local requests and admin-token holders only)." }, "allowed_origins": { "type": "array", "items": { "type": "string", "minLength": 1 }, "description": "Origin header values whose WebSocket upgrades are accepted (default none: an upgrade with an Origin header, i.e. from a web page, is refused 403)." }, "hello_timeout_ms": { "type": "integer", "minimum": 1, "description": "Hello timer (default 5000)." }, "ping_interval_ms": { "type": "integer", "minimum": 1, "description": "WebSocket ping interval (default 20000)." }, "missed_pongs": { "type": "integer", "minimum": 1, "description": "Missed pongs before close 1011 (default 3)." }, "rotation_grace_secs": { "type": "integer", "minimum": 0, "description": "Grace window for the previous token after a rotation (default 300)." }, "retention_days": { "type": "integer", "minimum": 0, "description": "Delete logs and metrics older than this (default 30; 0 keeps everything)." }, "max_db_bytes": { "type": ["integer", "null"], "minimum": 0, "description": "Optional database size cap; oldest rows are deleted first." }, "shutdown_drain_secs": { "type": "integer", "minimum": 0, "maximum": 300, "description": "drain_seconds sent on server stop (default 10)." }, "silent_after_secs": { "type": "integer", "minimum": 1, "description": "An agent not seen (no heartbeat, push or hello) for this long, and not revoked, counts as silent in GET /metrics (cortex_agents_silent, cortex_agents_gone_silent_total). Default 300." } } };
var schema33 = { "title": "AgentConfig", "description": "Agent configuration sent by the server in HelloResult.config and config.update. The server's instruction set for what to collect and how fast.", "type": "object", "required": ["heartbeat_interval_secs", "max_batch_entries", "flush_interval_ms", "log_sources", "probe_concurrency"], "additionalProperties": false, "properties": { "heartbeat_interval_secs": { "type": "integer", "minimum": 5, "maximum": 600 }, "max_batch_entries": { "type": "integer", "minimum": 1, "maximum": 65535 }, "flush_interval_ms": { "type": "integer", "minimum": 10, "maximum": 6e4 }, "metrics_interval_secs": { "type": ["integer", "null"], "minimum": 1, "description": "Host metrics (metrics.push) every this many seconds; absent: 60; null: no periodic metrics (the one-off reports of evictions and recoveries still go). No maximum: an agent waits intervals longer than its timers hold (Node.js: 24.8 days) in steps." }, "probe_concurrency": { "type": "integer", "minimum": 1, "maximum": 64 }, "log_sources": { "type": "array", "items": { "title": "LogSourceConfig", "description": "One log source the agent should tail.", "type": "object", "required": ["kind"], "properties": { "kind": { "type": "string", "enum": ["journald", "file", "docker", "custom"] }, "path": { "type": "string" }, "filter": { "type": ["string", "null"] }, "labels": { "type": "object", "additionalProperties": { "type": "string" } }, "start_at": { "type": "string", "enum": ["beginning", "end"], "description": 'kind file: where a file never seen before (no stored position) is first read from: "beginning" (default) reads what it already holds, "end" only what is written from now on. A file with a stored position always resumes there.' } } } } } };
var func1 = Object.prototype.hasOwnProperty;
var func2 = /* @__PURE__ */ require_ucs2length().default;
var pattern4 = /* @__PURE__ */ new RegExp("^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.\\-]+):[0-9]{1,5}$", "u");
var pattern5 = /* @__PURE__ */ new RegExp("^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$", "u");
function validate20(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate20.evaluated || (validate20.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      const _errs1 = errors;
      for (const key0 in data) {
        if (!func1.call(schema31.properties, key0)) {
          validate20.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
          return false;
          break;
        }
      }
      if (_errs1 === errors) {
        if (data.listen !== void 0) {
          let data0 = data.listen;
          const _errs2 = errors;
          if (errors === _errs2) {
            if (typeof data0 === "string") {
              if (!pattern4.test(data0)) {
                validate20.errors = [{ instancePath: instancePath + "/listen", schemaPath: "#/properties/listen/pattern", keyword: "pattern", params: { pattern: "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.\\-]+):[0-9]{1,5}$" }, message: 'must match pattern "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.\\-]+):[0-9]{1,5}$"' }];
                return false;
              }
            } else {
              validate20.errors = [{ instancePath: instancePath + "/listen", schemaPath: "#/properties/listen/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
          }
          var valid0 = _errs2 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.db !== void 0) {
            let data1 = data.db;
            const _errs4 = errors;
            if (errors === _errs4) {
              if (typeof data1 === "string") {
                if (func2(data1) < 1) {
                  validate20.errors = [{ instancePath: instancePath + "/db", schemaPath: "#/properties/db/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                  return false;
                }
              } else {
                validate20.errors = [{ instancePath: instancePath + "/db", schemaPath: "#/properties/db/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
            var valid0 = _errs4 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.admin_token !== void 0) {
              let data2 = data.admin_token;
              const _errs6 = errors;
              if (errors === _errs6) {
                if (typeof data2 === "string") {
                  if (func2(data2) > 256) {
                    validate20.errors = [{ instancePath: instancePath + "/admin_token", schemaPath: "#/properties/admin_token/maxLength", keyword: "maxLength", params: { limit: 256 }, message: "must NOT have more than 256 characters" }];
                    return false;
                  } else {
                    if (func2(data2) < 16) {
                      validate20.errors = [{ instancePath: instancePath + "/admin_token", schemaPath: "#/properties/admin_token/minLength", keyword: "minLength", params: { limit: 16 }, message: "must NOT have fewer than 16 characters" }];
                      return false;
                    }
                  }
                } else {
                  validate20.errors = [{ instancePath: instancePath + "/admin_token", schemaPath: "#/properties/admin_token/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
              }
              var valid0 = _errs6 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.tls_cert !== void 0) {
                let data3 = data.tls_cert;
                const _errs8 = errors;
                if (errors === _errs8) {
                  if (typeof data3 === "string") {
                    if (func2(data3) < 1) {
                      validate20.errors = [{ instancePath: instancePath + "/tls_cert", schemaPath: "#/properties/tls_cert/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                      return false;
                    }
                  } else {
                    validate20.errors = [{ instancePath: instancePath + "/tls_cert", schemaPath: "#/properties/tls_cert/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
                var valid0 = _errs8 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.tls_key !== void 0) {
                  let data4 = data.tls_key;
                  const _errs10 = errors;
                  if (errors === _errs10) {
                    if (typeof data4 === "string") {
                      if (func2(data4) < 1) {
                        validate20.errors = [{ instancePath: instancePath + "/tls_key", schemaPath: "#/properties/tls_key/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                        return false;
                      }
                    } else {
                      validate20.errors = [{ instancePath: instancePath + "/tls_key", schemaPath: "#/properties/tls_key/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                      return false;
                    }
                  }
                  var valid0 = _errs10 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.allow_insecure !== void 0) {
                    const _errs12 = errors;
                    if (typeof data.allow_insecure !== "boolean") {
                      validate20.errors = [{ instancePath: instancePath + "/allow_insecure", schemaPath: "#/properties/allow_insecure/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean" }];
                      return false;
                    }
                    var valid0 = _errs12 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.min_agent_version !== void 0) {
                      let data6 = data.min_agent_version;
                      const _errs14 = errors;
                      if (errors === _errs14) {
                        if (typeof data6 === "string") {
                          if (!pattern5.test(data6)) {
                            validate20.errors = [{ instancePath: instancePath + "/min_agent_version", schemaPath: "#/properties/min_agent_version/pattern", keyword: "pattern", params: { pattern: "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$" }, message: 'must match pattern "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$"' }];
                            return false;
                          }
                        } else {
                          validate20.errors = [{ instancePath: instancePath + "/min_agent_version", schemaPath: "#/properties/min_agent_version/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                          return false;
                        }
                      }
                      var valid0 = _errs14 === errors;
                    } else {
                      var valid0 = true;
                    }
                    if (valid0) {
                      if (data.required_protocol_version !== void 0) {
                        let data7 = data.required_protocol_version;
                        const _errs16 = errors;
                        if (!(typeof data7 == "number" && (!(data7 % 1) && !isNaN(data7)) && isFinite(data7))) {
                          validate20.errors = [{ instancePath: instancePath + "/required_protocol_version", schemaPath: "#/properties/required_protocol_version/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                          return false;
                        }
                        if (errors === _errs16) {
                          if (typeof data7 == "number" && isFinite(data7)) {
                            if (data7 < 1 || isNaN(data7)) {
                              validate20.errors = [{ instancePath: instancePath + "/required_protocol_version", schemaPath: "#/properties/required_protocol_version/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                              return false;
                            }
                          }
                        }
                        var valid0 = _errs16 === errors;
                      } else {
                        var valid0 = true;
                      }
                      if (valid0) {
                        if (data.default_agent_config !== void 0) {
                          let data8 = data.default_agent_config;
                          const _errs18 = errors;
                          const _errs19 = errors;
                          if (errors === _errs19) {
                            if (data8 && typeof data8 == "object" && !Array.isArray(data8)) {
                              let missing0;
                              if (data8.heartbeat_interval_secs === void 0 && (missing0 = "heartbeat_interval_secs") || data8.max_batch_entries === void 0 && (missing0 = "max_batch_entries") || data8.flush_interval_ms === void 0 && (missing0 = "flush_interval_ms") || data8.log_sources === void 0 && (missing0 = "log_sources") || data8.probe_concurrency === void 0 && (missing0 = "probe_concurrency")) {
                                validate20.errors = [{ instancePath: instancePath + "/default_agent_config", schemaPath: "defs.json#/$defs/AgentConfig/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
                                return false;
                              } else {
                                const _errs21 = errors;
                                for (const key1 in data8) {
                                  if (!(key1 === "heartbeat_interval_secs" || key1 === "max_batch_entries" || key1 === "flush_interval_ms" || key1 === "metrics_interval_secs" || key1 === "probe_concurrency" || key1 === "log_sources")) {
                                    validate20.errors = [{ instancePath: instancePath + "/default_agent_config", schemaPath: "defs.json#/$defs/AgentConfig/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                                    return false;
                                    break;
                                  }
                                }
                                if (_errs21 === errors) {
                                  if (data8.heartbeat_interval_secs !== void 0) {
                                    let data9 = data8.heartbeat_interval_secs;
                                    const _errs22 = errors;
                                    if (!(typeof data9 == "number" && (!(data9 % 1) && !isNaN(data9)) && isFinite(data9))) {
                                      validate20.errors = [{ instancePath: instancePath + "/default_agent_config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                      return false;
                                    }
                                    if (errors === _errs22) {
                                      if (typeof data9 == "number" && isFinite(data9)) {
                                        if (data9 > 600 || isNaN(data9)) {
                                          validate20.errors = [{ instancePath: instancePath + "/default_agent_config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/maximum", keyword: "maximum", params: { comparison: "<=", limit: 600 }, message: "must be <= 600" }];
                                          return false;
                                        } else {
                                          if (data9 < 5 || isNaN(data9)) {
                                            validate20.errors = [{ instancePath: instancePath + "/default_agent_config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 5 }, message: "must be >= 5" }];
                                            return false;
                                          }
                                        }
                                      }
                                    }
                                    var valid2 = _errs22 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data8.max_batch_entries !== void 0) {
                                      let data10 = data8.max_batch_entries;
                                      const _errs24 = errors;
                                      if (!(typeof data10 == "number" && (!(data10 % 1) && !isNaN(data10)) && isFinite(data10))) {
                                        validate20.errors = [{ instancePath: instancePath + "/default_agent_config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                        return false;
                                      }
                                      if (errors === _errs24) {
                                        if (typeof data10 == "number" && isFinite(data10)) {
                                          if (data10 > 65535 || isNaN(data10)) {
                                            validate20.errors = [{ instancePath: instancePath + "/default_agent_config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/maximum", keyword: "maximum", params: { comparison: "<=", limit: 65535 }, message: "must be <= 65535" }];
                                            return false;
                                          } else {
                                            if (data10 < 1 || isNaN(data10)) {
                                              validate20.errors = [{ instancePath: instancePath + "/default_agent_config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                              return false;
                                            }
                                          }
                                        }
                                      }
                                      var valid2 = _errs24 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                    if (valid2) {
                                      if (data8.flush_interval_ms !== void 0) {
                                        let data11 = data8.flush_interval_ms;
                                        const _errs26 = errors;
                                        if (!(typeof data11 == "number" && (!(data11 % 1) && !isNaN(data11)) && isFinite(data11))) {
                                          validate20.errors = [{ instancePath: instancePath + "/default_agent_config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                          return false;
                                        }
                                        if (errors === _errs26) {
                                          if (typeof data11 == "number" && isFinite(data11)) {
                                            if (data11 > 6e4 || isNaN(data11)) {
                                              validate20.errors = [{ instancePath: instancePath + "/default_agent_config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/maximum", keyword: "maximum", params: { comparison: "<=", limit: 6e4 }, message: "must be <= 60000" }];
                                              return false;
                                            } else {
                                              if (data11 < 10 || isNaN(data11)) {
                                                validate20.errors = [{ instancePath: instancePath + "/default_agent_config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 10 }, message: "must be >= 10" }];
                                                return false;
                                              }
                                            }
                                          }
                                        }
                                        var valid2 = _errs26 === errors;
                                      } else {
                                        var valid2 = true;
                                      }
                                      if (valid2) {
                                        if (data8.metrics_interval_secs !== void 0) {
                                          let data12 = data8.metrics_interval_secs;
                                          const _errs28 = errors;
                                          if (!(typeof data12 == "number" && (!(data12 % 1) && !isNaN(data12)) && isFinite(data12)) && data12 !== null) {
                                            validate20.errors = [{ instancePath: instancePath + "/default_agent_config/metrics_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/metrics_interval_secs/type", keyword: "type", params: { type: schema33.properties.metrics_interval_secs.type }, message: "must be integer,null" }];
                                            return false;
                                          }
                                          if (errors === _errs28) {
                                            if (typeof data12 == "number" && isFinite(data12)) {
                                              if (data12 < 1 || isNaN(data12)) {
                                                validate20.errors = [{ instancePath: instancePath + "/default_agent_config/metrics_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/metrics_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                                return false;
                                              }
                                            }
                                          }
                                          var valid2 = _errs28 === errors;
                                        } else {
                                          var valid2 = true;
                                        }
                                        if (valid2) {
                                          if (data8.probe_concurrency !== void 0) {
                                            let data13 = data8.probe_concurrency;
                                            const _errs30 = errors;
                                            if (!(typeof data13 == "number" && (!(data13 % 1) && !isNaN(data13)) && isFinite(data13))) {
                                              validate20.errors = [{ instancePath: instancePath + "/default_agent_config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                              return false;
                                            }
                                            if (errors === _errs30) {
                                              if (typeof data13 == "number" && isFinite(data13)) {
                                                if (data13 > 64 || isNaN(data13)) {
                                                  validate20.errors = [{ instancePath: instancePath + "/default_agent_config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/maximum", keyword: "maximum", params: { comparison: "<=", limit: 64 }, message: "must be <= 64" }];
                                                  return false;
                                                } else {
                                                  if (data13 < 1 || isNaN(data13)) {
                                                    validate20.errors = [{ instancePath: instancePath + "/default_agent_config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                                    return false;
                                                  }
                                                }
                                              }
                                            }
                                            var valid2 = _errs30 === errors;
                                          } else {
                                            var valid2 = true;
                                          }
                                          if (valid2) {
                                            if (data8.log_sources !== void 0) {
                                              let data14 = data8.log_sources;
                                              const _errs32 = errors;
                                              if (errors === _errs32) {
                                                if (Array.isArray(data14)) {
                                                  var valid3 = true;
                                                  const len0 = data14.length;
                                                  for (let i0 = 0; i0 < len0; i0++) {
                                                    let data15 = data14[i0];
                                                    const _errs34 = errors;
                                                    if (errors === _errs34) {
                                                      if (data15 && typeof data15 == "object" && !Array.isArray(data15)) {
                                                        let missing1;
                                                        if (data15.kind === void 0 && (missing1 = "kind")) {
                                                          validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0, schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                                                          return false;
                                                        } else {
                                                          if (data15.kind !== void 0) {
                                                            let data16 = data15.kind;
                                                            const _errs36 = errors;
                                                            if (typeof data16 !== "string") {
                                                              validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/kind", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/kind/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                              return false;
                                                            }
                                                            if (!(data16 === "journald" || data16 === "file" || data16 === "docker" || data16 === "custom")) {
                                                              validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/kind", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/kind/enum", keyword: "enum", params: { allowedValues: schema33.properties.log_sources.items.properties.kind.enum }, message: "must be equal to one of the allowed values" }];
                                                              return false;
                                                            }
                                                            var valid4 = _errs36 === errors;
                                                          } else {
                                                            var valid4 = true;
                                                          }
                                                          if (valid4) {
                                                            if (data15.path !== void 0) {
                                                              const _errs38 = errors;
                                                              if (typeof data15.path !== "string") {
                                                                validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/path", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                                return false;
                                                              }
                                                              var valid4 = _errs38 === errors;
                                                            } else {
                                                              var valid4 = true;
                                                            }
                                                            if (valid4) {
                                                              if (data15.filter !== void 0) {
                                                                let data18 = data15.filter;
                                                                const _errs40 = errors;
                                                                if (typeof data18 !== "string" && data18 !== null) {
                                                                  validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/filter", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/filter/type", keyword: "type", params: { type: schema33.properties.log_sources.items.properties.filter.type }, message: "must be string,null" }];
                                                                  return false;
                                                                }
                                                                var valid4 = _errs40 === errors;
                                                              } else {
                                                                var valid4 = true;
                                                              }
                                                              if (valid4) {
                                                                if (data15.labels !== void 0) {
                                                                  let data19 = data15.labels;
                                                                  const _errs42 = errors;
                                                                  if (errors === _errs42) {
                                                                    if (data19 && typeof data19 == "object" && !Array.isArray(data19)) {
                                                                      for (const key2 in data19) {
                                                                        const _errs45 = errors;
                                                                        if (typeof data19[key2] !== "string") {
                                                                          validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/labels/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/labels/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                                          return false;
                                                                        }
                                                                        var valid5 = _errs45 === errors;
                                                                        if (!valid5) {
                                                                          break;
                                                                        }
                                                                      }
                                                                    } else {
                                                                      validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/labels", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/labels/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                                                      return false;
                                                                    }
                                                                  }
                                                                  var valid4 = _errs42 === errors;
                                                                } else {
                                                                  var valid4 = true;
                                                                }
                                                                if (valid4) {
                                                                  if (data15.start_at !== void 0) {
                                                                    let data21 = data15.start_at;
                                                                    const _errs47 = errors;
                                                                    if (typeof data21 !== "string") {
                                                                      validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/start_at", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/start_at/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                                      return false;
                                                                    }
                                                                    if (!(data21 === "beginning" || data21 === "end")) {
                                                                      validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0 + "/start_at", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/start_at/enum", keyword: "enum", params: { allowedValues: schema33.properties.log_sources.items.properties.start_at.enum }, message: "must be equal to one of the allowed values" }];
                                                                      return false;
                                                                    }
                                                                    var valid4 = _errs47 === errors;
                                                                  } else {
                                                                    var valid4 = true;
                                                                  }
                                                                }
                                                              }
                                                            }
                                                          }
                                                        }
                                                      } else {
                                                        validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources/" + i0, schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                                        return false;
                                                      }
                                                    }
                                                    var valid3 = _errs34 === errors;
                                                    if (!valid3) {
                                                      break;
                                                    }
                                                  }
                                                } else {
                                                  validate20.errors = [{ instancePath: instancePath + "/default_agent_config/log_sources", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                                  return false;
                                                }
                                              }
                                              var valid2 = _errs32 === errors;
                                            } else {
                                              var valid2 = true;
                                            }
                                          }
                                        }
                                      }
                                    }
                                  }
                                }
                              }
                            } else {
                              validate20.errors = [{ instancePath: instancePath + "/default_agent_config", schemaPath: "defs.json#/$defs/AgentConfig/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                              return false;
                            }
                          }
                          var valid0 = _errs18 === errors;
                        } else {
                          var valid0 = true;
                        }
                        if (valid0) {
                          if (data.max_batch_entries !== void 0) {
                            let data22 = data.max_batch_entries;
                            const _errs49 = errors;
                            if (!(typeof data22 == "number" && (!(data22 % 1) && !isNaN(data22)) && isFinite(data22))) {
                              validate20.errors = [{ instancePath: instancePath + "/max_batch_entries", schemaPath: "#/properties/max_batch_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                              return false;
                            }
                            if (errors === _errs49) {
                              if (typeof data22 == "number" && isFinite(data22)) {
                                if (data22 > 1e3 || isNaN(data22)) {
                                  validate20.errors = [{ instancePath: instancePath + "/max_batch_entries", schemaPath: "#/properties/max_batch_entries/maximum", keyword: "maximum", params: { comparison: "<=", limit: 1e3 }, message: "must be <= 1000" }];
                                  return false;
                                } else {
                                  if (data22 < 1 || isNaN(data22)) {
                                    validate20.errors = [{ instancePath: instancePath + "/max_batch_entries", schemaPath: "#/properties/max_batch_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                    return false;
                                  }
                                }
                              }
                            }
                            var valid0 = _errs49 === errors;
                          } else {
                            var valid0 = true;
                          }
                          if (valid0) {
                            if (data.ingest_queue_batches !== void 0) {
                              let data23 = data.ingest_queue_batches;
                              const _errs51 = errors;
                              if (!(typeof data23 == "number" && (!(data23 % 1) && !isNaN(data23)) && isFinite(data23))) {
                                validate20.errors = [{ instancePath: instancePath + "/ingest_queue_batches", schemaPath: "#/properties/ingest_queue_batches/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                return false;
                              }
                              if (errors === _errs51) {
                                if (typeof data23 == "number" && isFinite(data23)) {
                                  if (data23 < 16 || isNaN(data23)) {
                                    validate20.errors = [{ instancePath: instancePath + "/ingest_queue_batches", schemaPath: "#/properties/ingest_queue_batches/minimum", keyword: "minimum", params: { comparison: ">=", limit: 16 }, message: "must be >= 16" }];
                                    return false;
                                  }
                                }
                              }
                              var valid0 = _errs51 === errors;
                            } else {
                              var valid0 = true;
                            }
                            if (valid0) {
                              if (data.agent_rate_entries_per_s !== void 0) {
                                let data24 = data.agent_rate_entries_per_s;
                                const _errs53 = errors;
                                if (!(typeof data24 == "number" && (!(data24 % 1) && !isNaN(data24)) && isFinite(data24))) {
                                  validate20.errors = [{ instancePath: instancePath + "/agent_rate_entries_per_s", schemaPath: "#/properties/agent_rate_entries_per_s/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                  return false;
                                }
                                if (errors === _errs53) {
                                  if (typeof data24 == "number" && isFinite(data24)) {
                                    if (data24 < 1 || isNaN(data24)) {
                                      validate20.errors = [{ instancePath: instancePath + "/agent_rate_entries_per_s", schemaPath: "#/properties/agent_rate_entries_per_s/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                      return false;
                                    }
                                  }
                                }
                                var valid0 = _errs53 === errors;
                              } else {
                                var valid0 = true;
                              }
                              if (valid0) {
                                if (data.upgrades_per_minute !== void 0) {
                                  let data25 = data.upgrades_per_minute;
                                  const _errs55 = errors;
                                  if (!(typeof data25 == "number" && (!(data25 % 1) && !isNaN(data25)) && isFinite(data25))) {
                                    validate20.errors = [{ instancePath: instancePath + "/upgrades_per_minute", schemaPath: "#/properties/upgrades_per_minute/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                    return false;
                                  }
                                  if (errors === _errs55) {
                                    if (typeof data25 == "number" && isFinite(data25)) {
                                      if (data25 < 0 || isNaN(data25)) {
                                        validate20.errors = [{ instancePath: instancePath + "/upgrades_per_minute", schemaPath: "#/properties/upgrades_per_minute/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                        return false;
                                      }
                                    }
                                  }
                                  var valid0 = _errs55 === errors;
                                } else {
                                  var valid0 = true;
                                }
                                if (valid0) {
                                  if (data.trusted_proxies !== void 0) {
                                    let data26 = data.trusted_proxies;
                                    const _errs57 = errors;
                                    if (errors === _errs57) {
                                      if (Array.isArray(data26)) {
                                        var valid6 = true;
                                        const len1 = data26.length;
                                        for (let i1 = 0; i1 < len1; i1++) {
                                          let data27 = data26[i1];
                                          const _errs59 = errors;
                                          if (errors === _errs59) {
                                            if (typeof data27 === "string") {
                                              if (func2(data27) < 1) {
                                                validate20.errors = [{ instancePath: instancePath + "/trusted_proxies/" + i1, schemaPath: "#/properties/trusted_proxies/items/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                                                return false;
                                              }
                                            } else {
                                              validate20.errors = [{ instancePath: instancePath + "/trusted_proxies/" + i1, schemaPath: "#/properties/trusted_proxies/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                              return false;
                                            }
                                          }
                                          var valid6 = _errs59 === errors;
                                          if (!valid6) {
                                            break;
                                          }
                                        }
                                      } else {
                                        validate20.errors = [{ instancePath: instancePath + "/trusted_proxies", schemaPath: "#/properties/trusted_proxies/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                        return false;
                                      }
                                    }
                                    var valid0 = _errs57 === errors;
                                  } else {
                                    var valid0 = true;
                                  }
                                  if (valid0) {
                                    if (data.failed_hellos_before_throttle !== void 0) {
                                      let data28 = data.failed_hellos_before_throttle;
                                      const _errs61 = errors;
                                      if (!(typeof data28 == "number" && (!(data28 % 1) && !isNaN(data28)) && isFinite(data28))) {
                                        validate20.errors = [{ instancePath: instancePath + "/failed_hellos_before_throttle", schemaPath: "#/properties/failed_hellos_before_throttle/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                        return false;
                                      }
                                      if (errors === _errs61) {
                                        if (typeof data28 == "number" && isFinite(data28)) {
                                          if (data28 < 0 || isNaN(data28)) {
                                            validate20.errors = [{ instancePath: instancePath + "/failed_hellos_before_throttle", schemaPath: "#/properties/failed_hellos_before_throttle/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                            return false;
                                          }
                                        }
                                      }
                                      var valid0 = _errs61 === errors;
                                    } else {
                                      var valid0 = true;
                                    }
                                    if (valid0) {
                                      if (data.metrics_public !== void 0) {
                                        const _errs63 = errors;
                                        if (typeof data.metrics_public !== "boolean") {
                                          validate20.errors = [{ instancePath: instancePath + "/metrics_public", schemaPath: "#/properties/metrics_public/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean" }];
                                          return false;
                                        }
                                        var valid0 = _errs63 === errors;
                                      } else {
                                        var valid0 = true;
                                      }
                                      if (valid0) {
                                        if (data.allowed_origins !== void 0) {
                                          let data30 = data.allowed_origins;
                                          const _errs65 = errors;
                                          if (errors === _errs65) {
                                            if (Array.isArray(data30)) {
                                              var valid7 = true;
                                              const len2 = data30.length;
                                              for (let i2 = 0; i2 < len2; i2++) {
                                                let data31 = data30[i2];
                                                const _errs67 = errors;
                                                if (errors === _errs67) {
                                                  if (typeof data31 === "string") {
                                                    if (func2(data31) < 1) {
                                                      validate20.errors = [{ instancePath: instancePath + "/allowed_origins/" + i2, schemaPath: "#/properties/allowed_origins/items/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                                                      return false;
                                                    }
                                                  } else {
                                                    validate20.errors = [{ instancePath: instancePath + "/allowed_origins/" + i2, schemaPath: "#/properties/allowed_origins/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                    return false;
                                                  }
                                                }
                                                var valid7 = _errs67 === errors;
                                                if (!valid7) {
                                                  break;
                                                }
                                              }
                                            } else {
                                              validate20.errors = [{ instancePath: instancePath + "/allowed_origins", schemaPath: "#/properties/allowed_origins/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                              return false;
                                            }
                                          }
                                          var valid0 = _errs65 === errors;
                                        } else {
                                          var valid0 = true;
                                        }
                                        if (valid0) {
                                          if (data.hello_timeout_ms !== void 0) {
                                            let data32 = data.hello_timeout_ms;
                                            const _errs69 = errors;
                                            if (!(typeof data32 == "number" && (!(data32 % 1) && !isNaN(data32)) && isFinite(data32))) {
                                              validate20.errors = [{ instancePath: instancePath + "/hello_timeout_ms", schemaPath: "#/properties/hello_timeout_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                              return false;
                                            }
                                            if (errors === _errs69) {
                                              if (typeof data32 == "number" && isFinite(data32)) {
                                                if (data32 < 1 || isNaN(data32)) {
                                                  validate20.errors = [{ instancePath: instancePath + "/hello_timeout_ms", schemaPath: "#/properties/hello_timeout_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                                  return false;
                                                }
                                              }
                                            }
                                            var valid0 = _errs69 === errors;
                                          } else {
                                            var valid0 = true;
                                          }
                                          if (valid0) {
                                            if (data.ping_interval_ms !== void 0) {
                                              let data33 = data.ping_interval_ms;
                                              const _errs71 = errors;
                                              if (!(typeof data33 == "number" && (!(data33 % 1) && !isNaN(data33)) && isFinite(data33))) {
                                                validate20.errors = [{ instancePath: instancePath + "/ping_interval_ms", schemaPath: "#/properties/ping_interval_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                return false;
                                              }
                                              if (errors === _errs71) {
                                                if (typeof data33 == "number" && isFinite(data33)) {
                                                  if (data33 < 1 || isNaN(data33)) {
                                                    validate20.errors = [{ instancePath: instancePath + "/ping_interval_ms", schemaPath: "#/properties/ping_interval_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                                    return false;
                                                  }
                                                }
                                              }
                                              var valid0 = _errs71 === errors;
                                            } else {
                                              var valid0 = true;
                                            }
                                            if (valid0) {
                                              if (data.missed_pongs !== void 0) {
                                                let data34 = data.missed_pongs;
                                                const _errs73 = errors;
                                                if (!(typeof data34 == "number" && (!(data34 % 1) && !isNaN(data34)) && isFinite(data34))) {
                                                  validate20.errors = [{ instancePath: instancePath + "/missed_pongs", schemaPath: "#/properties/missed_pongs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                  return false;
                                                }
                                                if (errors === _errs73) {
                                                  if (typeof data34 == "number" && isFinite(data34)) {
                                                    if (data34 < 1 || isNaN(data34)) {
                                                      validate20.errors = [{ instancePath: instancePath + "/missed_pongs", schemaPath: "#/properties/missed_pongs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                                      return false;
                                                    }
                                                  }
                                                }
                                                var valid0 = _errs73 === errors;
                                              } else {
                                                var valid0 = true;
                                              }
                                              if (valid0) {
                                                if (data.rotation_grace_secs !== void 0) {
                                                  let data35 = data.rotation_grace_secs;
                                                  const _errs75 = errors;
                                                  if (!(typeof data35 == "number" && (!(data35 % 1) && !isNaN(data35)) && isFinite(data35))) {
                                                    validate20.errors = [{ instancePath: instancePath + "/rotation_grace_secs", schemaPath: "#/properties/rotation_grace_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                    return false;
                                                  }
                                                  if (errors === _errs75) {
                                                    if (typeof data35 == "number" && isFinite(data35)) {
                                                      if (data35 < 0 || isNaN(data35)) {
                                                        validate20.errors = [{ instancePath: instancePath + "/rotation_grace_secs", schemaPath: "#/properties/rotation_grace_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                        return false;
                                                      }
                                                    }
                                                  }
                                                  var valid0 = _errs75 === errors;
                                                } else {
                                                  var valid0 = true;
                                                }
                                                if (valid0) {
                                                  if (data.retention_days !== void 0) {
                                                    let data36 = data.retention_days;
                                                    const _errs77 = errors;
                                                    if (!(typeof data36 == "number" && (!(data36 % 1) && !isNaN(data36)) && isFinite(data36))) {
                                                      validate20.errors = [{ instancePath: instancePath + "/retention_days", schemaPath: "#/properties/retention_days/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                      return false;
                                                    }
                                                    if (errors === _errs77) {
                                                      if (typeof data36 == "number" && isFinite(data36)) {
                                                        if (data36 < 0 || isNaN(data36)) {
                                                          validate20.errors = [{ instancePath: instancePath + "/retention_days", schemaPath: "#/properties/retention_days/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                          return false;
                                                        }
                                                      }
                                                    }
                                                    var valid0 = _errs77 === errors;
                                                  } else {
                                                    var valid0 = true;
                                                  }
                                                  if (valid0) {
                                                    if (data.max_db_bytes !== void 0) {
                                                      let data37 = data.max_db_bytes;
                                                      const _errs79 = errors;
                                                      if (!(typeof data37 == "number" && (!(data37 % 1) && !isNaN(data37)) && isFinite(data37)) && data37 !== null) {
                                                        validate20.errors = [{ instancePath: instancePath + "/max_db_bytes", schemaPath: "#/properties/max_db_bytes/type", keyword: "type", params: { type: schema31.properties.max_db_bytes.type }, message: "must be integer,null" }];
                                                        return false;
                                                      }
                                                      if (errors === _errs79) {
                                                        if (typeof data37 == "number" && isFinite(data37)) {
                                                          if (data37 < 0 || isNaN(data37)) {
                                                            validate20.errors = [{ instancePath: instancePath + "/max_db_bytes", schemaPath: "#/properties/max_db_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                            return false;
                                                          }
                                                        }
                                                      }
                                                      var valid0 = _errs79 === errors;
                                                    } else {
                                                      var valid0 = true;
                                                    }
                                                    if (valid0) {
                                                      if (data.shutdown_drain_secs !== void 0) {
                                                        let data38 = data.shutdown_drain_secs;
                                                        const _errs81 = errors;
                                                        if (!(typeof data38 == "number" && (!(data38 % 1) && !isNaN(data38)) && isFinite(data38))) {
                                                          validate20.errors = [{ instancePath: instancePath + "/shutdown_drain_secs", schemaPath: "#/properties/shutdown_drain_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                          return false;
                                                        }
                                                        if (errors === _errs81) {
                                                          if (typeof data38 == "number" && isFinite(data38)) {
                                                            if (data38 > 300 || isNaN(data38)) {
                                                              validate20.errors = [{ instancePath: instancePath + "/shutdown_drain_secs", schemaPath: "#/properties/shutdown_drain_secs/maximum", keyword: "maximum", params: { comparison: "<=", limit: 300 }, message: "must be <= 300" }];
                                                              return false;
                                                            } else {
                                                              if (data38 < 0 || isNaN(data38)) {
                                                                validate20.errors = [{ instancePath: instancePath + "/shutdown_drain_secs", schemaPath: "#/properties/shutdown_drain_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                                return false;
                                                              }
                                                            }
                                                          }
                                                        }
                                                        var valid0 = _errs81 === errors;
                                                      } else {
                                                        var valid0 = true;
                                                      }
                                                      if (valid0) {
                                                        if (data.silent_after_secs !== void 0) {
                                                          let data39 = data.silent_after_secs;
                                                          const _errs83 = errors;
                                                          if (!(typeof data39 == "number" && (!(data39 % 1) && !isNaN(data39)) && isFinite(data39))) {
                                                            validate20.errors = [{ instancePath: instancePath + "/silent_after_secs", schemaPath: "#/properties/silent_after_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                            return false;
                                                          }
                                                          if (errors === _errs83) {
                                                            if (typeof data39 == "number" && isFinite(data39)) {
                                                              if (data39 < 1 || isNaN(data39)) {
                                                                validate20.errors = [{ instancePath: instancePath + "/silent_after_secs", schemaPath: "#/properties/silent_after_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                                                return false;
                                                              }
                                                            }
                                                          }
                                                          var valid0 = _errs83 === errors;
                                                        } else {
                                                          var valid0 = true;
                                                        }
                                                      }
                                                    }
                                                  }
                                                }
                                              }
                                            }
                                          }
                                        }
                                      }
                                    }
                                  }
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    } else {
      validate20.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate20.errors = vErrors;
  return errors === 0;
}
export {
  validateServerConfig
};
