/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
var __getOwnPropNames = Object.getOwnPropertyNames;
var __commonJS = (cb, mod) => function __require() {
  try {
    return mod || (0, cb[__getOwnPropNames(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports;
  } catch (e) {
    throw mod = 0, e;
  }
};

// node_modules/ajv-formats/dist/formats.js
var require_formats = /* @__PURE__ */ __commonJS({
  "node_modules/ajv-formats/dist/formats.js"(exports) {
    "use strict";
    Object.defineProperty(exports, "__esModule", { value: true });
    exports.formatNames = exports.fastFormats = exports.fullFormats = void 0;
    function fmtDef(validate, compare) {
      return { validate, compare };
    }
    exports.fullFormats = {
      // date: http://tools.ietf.org/html/rfc3339#section-5.6
      date: fmtDef(date, compareDate),
      // date-time: http://tools.ietf.org/html/rfc3339#section-5.6
      time: fmtDef(getTime(true), compareTime),
      "date-time": fmtDef(getDateTime(true), compareDateTime),
      "iso-time": fmtDef(getTime(), compareIsoTime),
      "iso-date-time": fmtDef(getDateTime(), compareIsoDateTime),
      // duration: https://tools.ietf.org/html/rfc3339#appendix-A
      duration: /^P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$/,
      uri,
      "uri-reference": /^(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?$/i,
      // uri-template: https://tools.ietf.org/html/rfc6570
      "uri-template": /^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$/i,
      // For the source: https://gist.github.com/dperini/729294
      // For test cases: https://mathiasbynens.be/demo/url-regex
      url: /^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$/iu,
      email: /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i,
      hostname: /^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\.?$/i,
      // optimized https://www.safaribooksonline.com/library/view/regular-expressions-cookbook/9780596802837/ch07s16.html
      ipv4: /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
      ipv6: /^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$/i,
      regex,
      // uuid: http://tools.ietf.org/html/rfc4122
      uuid: /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i,
      // JSON-pointer: https://tools.ietf.org/html/rfc6901
      // uri fragment: https://tools.ietf.org/html/rfc3986#appendix-A
      "json-pointer": /^(?:\/(?:[^~/]|~0|~1)*)*$/,
      "json-pointer-uri-fragment": /^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$/i,
      // relative JSON-pointer: http://tools.ietf.org/html/draft-luff-relative-json-pointer-00
      "relative-json-pointer": /^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$/,
      // the following formats are used by the openapi specification: https://spec.openapis.org/oas/v3.0.0#data-types
      // byte: https://github.com/miguelmota/is-base64
      byte,
      // signed 32 bit integer
      int32: { type: "number", validate: validateInt32 },
      // signed 64 bit integer
      int64: { type: "number", validate: validateInt64 },
      // C-type float
      float: { type: "number", validate: validateNumber },
      // C-type double
      double: { type: "number", validate: validateNumber },
      // hint to the UI to hide input strings
      password: true,
      // unchecked string payload
      binary: true
    };
    exports.fastFormats = {
      ...exports.fullFormats,
      date: fmtDef(/^\d\d\d\d-[0-1]\d-[0-3]\d$/, compareDate),
      time: fmtDef(/^(?:[0-2]\d:[0-5]\d:[0-5]\d|23:59:60)(?:\.\d+)?(?:z|[+-]\d\d(?::?\d\d)?)$/i, compareTime),
      "date-time": fmtDef(/^\d\d\d\d-[0-1]\d-[0-3]\dt(?:[0-2]\d:[0-5]\d:[0-5]\d|23:59:60)(?:\.\d+)?(?:z|[+-]\d\d(?::?\d\d)?)$/i, compareDateTime),
      "iso-time": fmtDef(/^(?:[0-2]\d:[0-5]\d:[0-5]\d|23:59:60)(?:\.\d+)?(?:z|[+-]\d\d(?::?\d\d)?)?$/i, compareIsoTime),
      "iso-date-time": fmtDef(/^\d\d\d\d-[0-1]\d-[0-3]\d[t\s](?:[0-2]\d:[0-5]\d:[0-5]\d|23:59:60)(?:\.\d+)?(?:z|[+-]\d\d(?::?\d\d)?)?$/i, compareIsoDateTime),
      // uri: https://github.com/mafintosh/is-my-json-valid/blob/master/formats.js
      uri: /^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/)?[^\s]*$/i,
      "uri-reference": /^(?:(?:[a-z][a-z0-9+\-.]*:)?\/?\/)?(?:[^\\\s#][^\s#]*)?(?:#[^\\\s]*)?$/i,
      // email (sources from jsen validator):
      // http://stackoverflow.com/questions/201323/using-a-regular-expression-to-validate-an-email-address#answer-8829363
      // http://www.w3.org/TR/html5/forms.html#valid-e-mail-address (search for 'wilful violation')
      email: /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i
    };
    exports.formatNames = Object.keys(exports.fullFormats);
    function isLeapYear(year) {
      return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    }
    var DATE = /^(\d\d\d\d)-(\d\d)-(\d\d)$/;
    var DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    function date(str) {
      const matches = DATE.exec(str);
      if (!matches)
        return false;
      const year = +matches[1];
      const month = +matches[2];
      const day = +matches[3];
      return month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && isLeapYear(year) ? 29 : DAYS[month]);
    }
    function compareDate(d1, d2) {
      if (!(d1 && d2))
        return void 0;
      if (d1 > d2)
        return 1;
      if (d1 < d2)
        return -1;
      return 0;
    }
    var TIME = /^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$/i;
    function getTime(strictTimeZone) {
      return function time(str) {
        const matches = TIME.exec(str);
        if (!matches)
          return false;
        const hr = +matches[1];
        const min = +matches[2];
        const sec = +matches[3];
        const tz = matches[4];
        const tzSign = matches[5] === "-" ? -1 : 1;
        const tzH = +(matches[6] || 0);
        const tzM = +(matches[7] || 0);
        if (tzH > 23 || tzM > 59 || strictTimeZone && !tz)
          return false;
        if (hr <= 23 && min <= 59 && sec < 60)
          return true;
        const utcMin = min - tzM * tzSign;
        const utcHr = hr - tzH * tzSign - (utcMin < 0 ? 1 : 0);
        return (utcHr === 23 || utcHr === -1) && (utcMin === 59 || utcMin === -1) && sec < 61;
      };
    }
    function compareTime(s1, s2) {
      if (!(s1 && s2))
        return void 0;
      const t1 = (/* @__PURE__ */ new Date("2020-01-01T" + s1)).valueOf();
      const t2 = (/* @__PURE__ */ new Date("2020-01-01T" + s2)).valueOf();
      if (!(t1 && t2))
        return void 0;
      return t1 - t2;
    }
    function compareIsoTime(t1, t2) {
      if (!(t1 && t2))
        return void 0;
      const a1 = TIME.exec(t1);
      const a2 = TIME.exec(t2);
      if (!(a1 && a2))
        return void 0;
      t1 = a1[1] + a1[2] + a1[3];
      t2 = a2[1] + a2[2] + a2[3];
      if (t1 > t2)
        return 1;
      if (t1 < t2)
        return -1;
      return 0;
    }
    var DATE_TIME_SEPARATOR = /t|\s/i;
    function getDateTime(strictTimeZone) {
      const time = getTime(strictTimeZone);
      return function date_time(str) {
        const dateTime = str.split(DATE_TIME_SEPARATOR);
        return dateTime.length === 2 && date(dateTime[0]) && time(dateTime[1]);
      };
    }
    function compareDateTime(dt1, dt2) {
      if (!(dt1 && dt2))
        return void 0;
      const d1 = new Date(dt1).valueOf();
      const d2 = new Date(dt2).valueOf();
      if (!(d1 && d2))
        return void 0;
      return d1 - d2;
    }
    function compareIsoDateTime(dt1, dt2) {
      if (!(dt1 && dt2))
        return void 0;
      const [d1, t1] = dt1.split(DATE_TIME_SEPARATOR);
      const [d2, t2] = dt2.split(DATE_TIME_SEPARATOR);
      const res = compareDate(d1, d2);
      if (res === void 0)
        return void 0;
      return res || compareTime(t1, t2);
    }
    var NOT_URI_FRAGMENT = /\/|:/;
    var URI = /^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$/i;
    function uri(str) {
      return NOT_URI_FRAGMENT.test(str) && URI.test(str);
    }
    var BYTE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/gm;
    function byte(str) {
      BYTE.lastIndex = 0;
      return BYTE.test(str);
    }
    var MIN_INT32 = -(2 ** 31);
    var MAX_INT32 = 2 ** 31 - 1;
    function validateInt32(value) {
      return Number.isInteger(value) && value <= MAX_INT32 && value >= MIN_INT32;
    }
    function validateInt64(value) {
      return Number.isInteger(value);
    }
    function validateNumber() {
      return true;
    }
    var Z_ANCHOR = /[^\\]\\Z/;
    function regex(str) {
      if (Z_ANCHOR.test(str))
        return false;
      try {
        new RegExp(str);
        return true;
      } catch (e) {
        return false;
      }
    }
  }
});

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

// validators.js
var validateAgentHeartbeatParams = validate20;
var formats0 = /* @__PURE__ */ require_formats().fullFormats["date-time"];
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
      let missing0;
      if (data.ts === void 0 && (missing0 = "ts") || data.queue_depth === void 0 && (missing0 = "queue_depth") || data.buffer_bytes === void 0 && (missing0 = "buffer_bytes")) {
        validate20.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "ts" || key0 === "queue_depth" || key0 === "buffer_bytes" || key0 === "push_lag_seq")) {
            validate20.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.ts !== void 0) {
            let data0 = data.ts;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (errors === _errs2) {
                if (typeof data0 === "string") {
                  if (!formats0.validate(data0)) {
                    validate20.errors = [{ instancePath: instancePath + "/ts", schemaPath: "#/properties/ts/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                    return false;
                  }
                } else {
                  validate20.errors = [{ instancePath: instancePath + "/ts", schemaPath: "#/properties/ts/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.queue_depth !== void 0) {
              let data1 = data.queue_depth;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate20.errors = [{ instancePath: instancePath + "/queue_depth", schemaPath: "#/properties/queue_depth/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 < 0 || isNaN(data1)) {
                    validate20.errors = [{ instancePath: instancePath + "/queue_depth", schemaPath: "#/properties/queue_depth/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.buffer_bytes !== void 0) {
                let data2 = data.buffer_bytes;
                const _errs6 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate20.errors = [{ instancePath: instancePath + "/buffer_bytes", schemaPath: "#/properties/buffer_bytes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs6) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 < 0 || isNaN(data2)) {
                      validate20.errors = [{ instancePath: instancePath + "/buffer_bytes", schemaPath: "#/properties/buffer_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.push_lag_seq !== void 0) {
                  let data3 = data.push_lag_seq;
                  const _errs8 = errors;
                  if (!(typeof data3 == "number" && (!(data3 % 1) && !isNaN(data3)) && isFinite(data3))) {
                    validate20.errors = [{ instancePath: instancePath + "/push_lag_seq", schemaPath: "#/properties/push_lag_seq/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                    return false;
                  }
                  if (errors === _errs8) {
                    if (typeof data3 == "number" && isFinite(data3)) {
                      if (data3 < 0 || isNaN(data3)) {
                        validate20.errors = [{ instancePath: instancePath + "/push_lag_seq", schemaPath: "#/properties/push_lag_seq/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                        return false;
                      }
                    }
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
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
var validateAgentHelloParams = validate21;
var schema32 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/agent.hello.params.json", "title": "AgentHelloParams", "description": "agent.hello params: handshake, identity, capability declaration, replay coordination. The first frame on every connection.", "type": "object", "required": ["protocol_version", "agent_version", "hostname", "host_id", "platform", "capabilities", "token"], "additionalProperties": false, "properties": { "protocol_version": { "type": "integer", "minimum": 1, "maximum": 1 }, "agent_version": { "type": "string", "pattern": "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$" }, "hostname": { "type": "string", "minLength": 1, "maxLength": 253 }, "host_id": { "type": "string", "format": "uuid" }, "platform": { "title": "Platform", "description": "Host platform, used for diagnostics and probe eligibility.", "type": "object", "required": ["os", "arch", "kernel"], "additionalProperties": false, "properties": { "os": { "type": "string" }, "arch": { "type": "string" }, "kernel": { "type": "string" }, "distro": { "type": ["string", "null"] } } }, "capabilities": { "title": "Capabilities", "description": "What the agent can do (PROTOCOL.md#probes for the probe names). Stored verbatim by the server.", "type": "object", "required": ["supported_probes", "sources", "max_batch_entries", "compression"], "additionalProperties": false, "properties": { "supported_probes": { "type": "array", "items": { "type": "string" } }, "sources": { "type": "array", "items": { "type": "string", "enum": ["journald", "file", "docker", "custom"] } }, "max_batch_entries": { "type": "integer", "minimum": 1, "maximum": 65535 }, "compression": { "type": "array", "items": { "type": "string", "enum": ["zstd"] } } } }, "token": { "type": "string", "minLength": 32, "maxLength": 256, "description": "One-time enrollment token or long-lived token. Secret: never logged." }, "resume_from_seq": { "type": ["integer", "null"], "minimum": 0, "description": "The agent's acked_seq (highest seq it knows the server committed)." } } };
var pattern4 = /* @__PURE__ */ new RegExp("^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$", "u");
var func1 = /* @__PURE__ */ require_ucs2length().default;
var formats2 = /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;
function validate21(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate21.evaluated || (validate21.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.protocol_version === void 0 && (missing0 = "protocol_version") || data.agent_version === void 0 && (missing0 = "agent_version") || data.hostname === void 0 && (missing0 = "hostname") || data.host_id === void 0 && (missing0 = "host_id") || data.platform === void 0 && (missing0 = "platform") || data.capabilities === void 0 && (missing0 = "capabilities") || data.token === void 0 && (missing0 = "token")) {
        validate21.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "protocol_version" || key0 === "agent_version" || key0 === "hostname" || key0 === "host_id" || key0 === "platform" || key0 === "capabilities" || key0 === "token" || key0 === "resume_from_seq")) {
            validate21.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.protocol_version !== void 0) {
            let data0 = data.protocol_version;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate21.errors = [{ instancePath: instancePath + "/protocol_version", schemaPath: "#/properties/protocol_version/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 > 1 || isNaN(data0)) {
                  validate21.errors = [{ instancePath: instancePath + "/protocol_version", schemaPath: "#/properties/protocol_version/maximum", keyword: "maximum", params: { comparison: "<=", limit: 1 }, message: "must be <= 1" }];
                  return false;
                } else {
                  if (data0 < 1 || isNaN(data0)) {
                    validate21.errors = [{ instancePath: instancePath + "/protocol_version", schemaPath: "#/properties/protocol_version/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                    return false;
                  }
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.agent_version !== void 0) {
              let data1 = data.agent_version;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (typeof data1 === "string") {
                  if (!pattern4.test(data1)) {
                    validate21.errors = [{ instancePath: instancePath + "/agent_version", schemaPath: "#/properties/agent_version/pattern", keyword: "pattern", params: { pattern: "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$" }, message: 'must match pattern "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$"' }];
                    return false;
                  }
                } else {
                  validate21.errors = [{ instancePath: instancePath + "/agent_version", schemaPath: "#/properties/agent_version/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.hostname !== void 0) {
                let data2 = data.hostname;
                const _errs6 = errors;
                if (errors === _errs6) {
                  if (typeof data2 === "string") {
                    if (func1(data2) > 253) {
                      validate21.errors = [{ instancePath: instancePath + "/hostname", schemaPath: "#/properties/hostname/maxLength", keyword: "maxLength", params: { limit: 253 }, message: "must NOT have more than 253 characters" }];
                      return false;
                    } else {
                      if (func1(data2) < 1) {
                        validate21.errors = [{ instancePath: instancePath + "/hostname", schemaPath: "#/properties/hostname/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                        return false;
                      }
                    }
                  } else {
                    validate21.errors = [{ instancePath: instancePath + "/hostname", schemaPath: "#/properties/hostname/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.host_id !== void 0) {
                  let data3 = data.host_id;
                  const _errs8 = errors;
                  if (errors === _errs8) {
                    if (errors === _errs8) {
                      if (typeof data3 === "string") {
                        if (!formats2.test(data3)) {
                          validate21.errors = [{ instancePath: instancePath + "/host_id", schemaPath: "#/properties/host_id/format", keyword: "format", params: { format: "uuid" }, message: 'must match format "uuid"' }];
                          return false;
                        }
                      } else {
                        validate21.errors = [{ instancePath: instancePath + "/host_id", schemaPath: "#/properties/host_id/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                        return false;
                      }
                    }
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.platform !== void 0) {
                    let data4 = data.platform;
                    const _errs10 = errors;
                    if (errors === _errs10) {
                      if (data4 && typeof data4 == "object" && !Array.isArray(data4)) {
                        let missing1;
                        if (data4.os === void 0 && (missing1 = "os") || data4.arch === void 0 && (missing1 = "arch") || data4.kernel === void 0 && (missing1 = "kernel")) {
                          validate21.errors = [{ instancePath: instancePath + "/platform", schemaPath: "#/properties/platform/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                          return false;
                        } else {
                          const _errs12 = errors;
                          for (const key1 in data4) {
                            if (!(key1 === "os" || key1 === "arch" || key1 === "kernel" || key1 === "distro")) {
                              validate21.errors = [{ instancePath: instancePath + "/platform", schemaPath: "#/properties/platform/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                              return false;
                              break;
                            }
                          }
                          if (_errs12 === errors) {
                            if (data4.os !== void 0) {
                              const _errs13 = errors;
                              if (typeof data4.os !== "string") {
                                validate21.errors = [{ instancePath: instancePath + "/platform/os", schemaPath: "#/properties/platform/properties/os/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                return false;
                              }
                              var valid1 = _errs13 === errors;
                            } else {
                              var valid1 = true;
                            }
                            if (valid1) {
                              if (data4.arch !== void 0) {
                                const _errs15 = errors;
                                if (typeof data4.arch !== "string") {
                                  validate21.errors = [{ instancePath: instancePath + "/platform/arch", schemaPath: "#/properties/platform/properties/arch/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                  return false;
                                }
                                var valid1 = _errs15 === errors;
                              } else {
                                var valid1 = true;
                              }
                              if (valid1) {
                                if (data4.kernel !== void 0) {
                                  const _errs17 = errors;
                                  if (typeof data4.kernel !== "string") {
                                    validate21.errors = [{ instancePath: instancePath + "/platform/kernel", schemaPath: "#/properties/platform/properties/kernel/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                    return false;
                                  }
                                  var valid1 = _errs17 === errors;
                                } else {
                                  var valid1 = true;
                                }
                                if (valid1) {
                                  if (data4.distro !== void 0) {
                                    let data8 = data4.distro;
                                    const _errs19 = errors;
                                    if (typeof data8 !== "string" && data8 !== null) {
                                      validate21.errors = [{ instancePath: instancePath + "/platform/distro", schemaPath: "#/properties/platform/properties/distro/type", keyword: "type", params: { type: schema32.properties.platform.properties.distro.type }, message: "must be string,null" }];
                                      return false;
                                    }
                                    var valid1 = _errs19 === errors;
                                  } else {
                                    var valid1 = true;
                                  }
                                }
                              }
                            }
                          }
                        }
                      } else {
                        validate21.errors = [{ instancePath: instancePath + "/platform", schemaPath: "#/properties/platform/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                        return false;
                      }
                    }
                    var valid0 = _errs10 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.capabilities !== void 0) {
                      let data9 = data.capabilities;
                      const _errs21 = errors;
                      if (errors === _errs21) {
                        if (data9 && typeof data9 == "object" && !Array.isArray(data9)) {
                          let missing2;
                          if (data9.supported_probes === void 0 && (missing2 = "supported_probes") || data9.sources === void 0 && (missing2 = "sources") || data9.max_batch_entries === void 0 && (missing2 = "max_batch_entries") || data9.compression === void 0 && (missing2 = "compression")) {
                            validate21.errors = [{ instancePath: instancePath + "/capabilities", schemaPath: "#/properties/capabilities/required", keyword: "required", params: { missingProperty: missing2 }, message: "must have required property '" + missing2 + "'" }];
                            return false;
                          } else {
                            const _errs23 = errors;
                            for (const key2 in data9) {
                              if (!(key2 === "supported_probes" || key2 === "sources" || key2 === "max_batch_entries" || key2 === "compression")) {
                                validate21.errors = [{ instancePath: instancePath + "/capabilities", schemaPath: "#/properties/capabilities/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key2 }, message: "must NOT have additional properties" }];
                                return false;
                                break;
                              }
                            }
                            if (_errs23 === errors) {
                              if (data9.supported_probes !== void 0) {
                                let data10 = data9.supported_probes;
                                const _errs24 = errors;
                                if (errors === _errs24) {
                                  if (Array.isArray(data10)) {
                                    var valid3 = true;
                                    const len0 = data10.length;
                                    for (let i0 = 0; i0 < len0; i0++) {
                                      const _errs26 = errors;
                                      if (typeof data10[i0] !== "string") {
                                        validate21.errors = [{ instancePath: instancePath + "/capabilities/supported_probes/" + i0, schemaPath: "#/properties/capabilities/properties/supported_probes/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                        return false;
                                      }
                                      var valid3 = _errs26 === errors;
                                      if (!valid3) {
                                        break;
                                      }
                                    }
                                  } else {
                                    validate21.errors = [{ instancePath: instancePath + "/capabilities/supported_probes", schemaPath: "#/properties/capabilities/properties/supported_probes/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                    return false;
                                  }
                                }
                                var valid2 = _errs24 === errors;
                              } else {
                                var valid2 = true;
                              }
                              if (valid2) {
                                if (data9.sources !== void 0) {
                                  let data12 = data9.sources;
                                  const _errs28 = errors;
                                  if (errors === _errs28) {
                                    if (Array.isArray(data12)) {
                                      var valid4 = true;
                                      const len1 = data12.length;
                                      for (let i1 = 0; i1 < len1; i1++) {
                                        let data13 = data12[i1];
                                        const _errs30 = errors;
                                        if (typeof data13 !== "string") {
                                          validate21.errors = [{ instancePath: instancePath + "/capabilities/sources/" + i1, schemaPath: "#/properties/capabilities/properties/sources/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                          return false;
                                        }
                                        if (!(data13 === "journald" || data13 === "file" || data13 === "docker" || data13 === "custom")) {
                                          validate21.errors = [{ instancePath: instancePath + "/capabilities/sources/" + i1, schemaPath: "#/properties/capabilities/properties/sources/items/enum", keyword: "enum", params: { allowedValues: schema32.properties.capabilities.properties.sources.items.enum }, message: "must be equal to one of the allowed values" }];
                                          return false;
                                        }
                                        var valid4 = _errs30 === errors;
                                        if (!valid4) {
                                          break;
                                        }
                                      }
                                    } else {
                                      validate21.errors = [{ instancePath: instancePath + "/capabilities/sources", schemaPath: "#/properties/capabilities/properties/sources/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                      return false;
                                    }
                                  }
                                  var valid2 = _errs28 === errors;
                                } else {
                                  var valid2 = true;
                                }
                                if (valid2) {
                                  if (data9.max_batch_entries !== void 0) {
                                    let data14 = data9.max_batch_entries;
                                    const _errs32 = errors;
                                    if (!(typeof data14 == "number" && (!(data14 % 1) && !isNaN(data14)) && isFinite(data14))) {
                                      validate21.errors = [{ instancePath: instancePath + "/capabilities/max_batch_entries", schemaPath: "#/properties/capabilities/properties/max_batch_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                      return false;
                                    }
                                    if (errors === _errs32) {
                                      if (typeof data14 == "number" && isFinite(data14)) {
                                        if (data14 > 65535 || isNaN(data14)) {
                                          validate21.errors = [{ instancePath: instancePath + "/capabilities/max_batch_entries", schemaPath: "#/properties/capabilities/properties/max_batch_entries/maximum", keyword: "maximum", params: { comparison: "<=", limit: 65535 }, message: "must be <= 65535" }];
                                          return false;
                                        } else {
                                          if (data14 < 1 || isNaN(data14)) {
                                            validate21.errors = [{ instancePath: instancePath + "/capabilities/max_batch_entries", schemaPath: "#/properties/capabilities/properties/max_batch_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                            return false;
                                          }
                                        }
                                      }
                                    }
                                    var valid2 = _errs32 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data9.compression !== void 0) {
                                      let data15 = data9.compression;
                                      const _errs34 = errors;
                                      if (errors === _errs34) {
                                        if (Array.isArray(data15)) {
                                          var valid5 = true;
                                          const len2 = data15.length;
                                          for (let i2 = 0; i2 < len2; i2++) {
                                            let data16 = data15[i2];
                                            const _errs36 = errors;
                                            if (typeof data16 !== "string") {
                                              validate21.errors = [{ instancePath: instancePath + "/capabilities/compression/" + i2, schemaPath: "#/properties/capabilities/properties/compression/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                              return false;
                                            }
                                            if (!(data16 === "zstd")) {
                                              validate21.errors = [{ instancePath: instancePath + "/capabilities/compression/" + i2, schemaPath: "#/properties/capabilities/properties/compression/items/enum", keyword: "enum", params: { allowedValues: schema32.properties.capabilities.properties.compression.items.enum }, message: "must be equal to one of the allowed values" }];
                                              return false;
                                            }
                                            var valid5 = _errs36 === errors;
                                            if (!valid5) {
                                              break;
                                            }
                                          }
                                        } else {
                                          validate21.errors = [{ instancePath: instancePath + "/capabilities/compression", schemaPath: "#/properties/capabilities/properties/compression/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                          return false;
                                        }
                                      }
                                      var valid2 = _errs34 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                  }
                                }
                              }
                            }
                          }
                        } else {
                          validate21.errors = [{ instancePath: instancePath + "/capabilities", schemaPath: "#/properties/capabilities/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                          return false;
                        }
                      }
                      var valid0 = _errs21 === errors;
                    } else {
                      var valid0 = true;
                    }
                    if (valid0) {
                      if (data.token !== void 0) {
                        let data17 = data.token;
                        const _errs38 = errors;
                        if (errors === _errs38) {
                          if (typeof data17 === "string") {
                            if (func1(data17) > 256) {
                              validate21.errors = [{ instancePath: instancePath + "/token", schemaPath: "#/properties/token/maxLength", keyword: "maxLength", params: { limit: 256 }, message: "must NOT have more than 256 characters" }];
                              return false;
                            } else {
                              if (func1(data17) < 32) {
                                validate21.errors = [{ instancePath: instancePath + "/token", schemaPath: "#/properties/token/minLength", keyword: "minLength", params: { limit: 32 }, message: "must NOT have fewer than 32 characters" }];
                                return false;
                              }
                            }
                          } else {
                            validate21.errors = [{ instancePath: instancePath + "/token", schemaPath: "#/properties/token/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                            return false;
                          }
                        }
                        var valid0 = _errs38 === errors;
                      } else {
                        var valid0 = true;
                      }
                      if (valid0) {
                        if (data.resume_from_seq !== void 0) {
                          let data18 = data.resume_from_seq;
                          const _errs40 = errors;
                          if (!(typeof data18 == "number" && (!(data18 % 1) && !isNaN(data18)) && isFinite(data18)) && data18 !== null) {
                            validate21.errors = [{ instancePath: instancePath + "/resume_from_seq", schemaPath: "#/properties/resume_from_seq/type", keyword: "type", params: { type: schema32.properties.resume_from_seq.type }, message: "must be integer,null" }];
                            return false;
                          }
                          if (errors === _errs40) {
                            if (typeof data18 == "number" && isFinite(data18)) {
                              if (data18 < 0 || isNaN(data18)) {
                                validate21.errors = [{ instancePath: instancePath + "/resume_from_seq", schemaPath: "#/properties/resume_from_seq/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                return false;
                              }
                            }
                          }
                          var valid0 = _errs40 === errors;
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
    } else {
      validate21.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate21.errors = vErrors;
  return errors === 0;
}
var validateAgentHelloResult = validate22;
var schema33 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/agent.hello.result.json", "title": "AgentHelloResult", "description": "agent.hello result (HelloResult).", "type": "object", "required": ["server_version", "server_time", "accepted_seq", "config", "session_id"], "additionalProperties": false, "properties": { "server_version": { "type": "string" }, "server_time": { "type": "string", "format": "date-time" }, "accepted_seq": { "type": "integer", "minimum": 0 }, "session_id": { "type": "string", "format": "uuid" }, "rotated_token": { "description": "Set when the server has rotated the agent's token (typically: first enroll, where the agent sent a one-time enrollment token and the server replaces it with a long-lived token). When present, the agent MUST atomically persist this as its new long-lived credential, overwriting whatever it sent in agent.hello.params.token. Server-side, agents.token_hash is updated to BLAKE3(rotated_token); the previous one-time token becomes invalid immediately (no grace window for first-enroll rotation). Absent when the server determined no rotation was needed. Secret: never logged.", "type": ["string", "null"], "minLength": 32, "maxLength": 256 }, "config": { "$ref": "defs.json#/$defs/AgentConfig" } } };
var schema35 = { "title": "AgentConfig", "description": "Agent configuration sent by the server in HelloResult.config and config.update. The server's instruction set for what to collect and how fast.", "type": "object", "required": ["heartbeat_interval_secs", "max_batch_entries", "flush_interval_ms", "log_sources", "probe_concurrency"], "additionalProperties": false, "properties": { "heartbeat_interval_secs": { "type": "integer", "minimum": 5, "maximum": 600 }, "max_batch_entries": { "type": "integer", "minimum": 1, "maximum": 65535 }, "flush_interval_ms": { "type": "integer", "minimum": 10, "maximum": 6e4 }, "metrics_interval_secs": { "type": ["integer", "null"], "minimum": 1, "description": "Host metrics (metrics.push) every this many seconds; absent: 60; null: no periodic metrics (the one-off reports of evictions and recoveries still go). No maximum: an agent waits intervals longer than its timers hold (Node.js: 24.8 days) in steps." }, "probe_concurrency": { "type": "integer", "minimum": 1, "maximum": 64 }, "log_sources": { "type": "array", "items": { "title": "LogSourceConfig", "description": "One log source the agent should tail.", "type": "object", "required": ["kind"], "properties": { "kind": { "type": "string", "enum": ["journald", "file", "docker", "custom"] }, "path": { "type": "string" }, "filter": { "type": ["string", "null"] }, "labels": { "type": "object", "additionalProperties": { "type": "string" } }, "start_at": { "type": "string", "enum": ["beginning", "end"], "description": 'kind file: where a file never seen before (no stored position) is first read from: "beginning" (default) reads what it already holds, "end" only what is written from now on. A file with a stored position always resumes there.' } } } } } };
function validate22(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate22.evaluated || (validate22.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.server_version === void 0 && (missing0 = "server_version") || data.server_time === void 0 && (missing0 = "server_time") || data.accepted_seq === void 0 && (missing0 = "accepted_seq") || data.config === void 0 && (missing0 = "config") || data.session_id === void 0 && (missing0 = "session_id")) {
        validate22.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "server_version" || key0 === "server_time" || key0 === "accepted_seq" || key0 === "session_id" || key0 === "rotated_token" || key0 === "config")) {
            validate22.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.server_version !== void 0) {
            const _errs2 = errors;
            if (typeof data.server_version !== "string") {
              validate22.errors = [{ instancePath: instancePath + "/server_version", schemaPath: "#/properties/server_version/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.server_time !== void 0) {
              let data1 = data.server_time;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (errors === _errs4) {
                  if (typeof data1 === "string") {
                    if (!formats0.validate(data1)) {
                      validate22.errors = [{ instancePath: instancePath + "/server_time", schemaPath: "#/properties/server_time/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                      return false;
                    }
                  } else {
                    validate22.errors = [{ instancePath: instancePath + "/server_time", schemaPath: "#/properties/server_time/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.accepted_seq !== void 0) {
                let data2 = data.accepted_seq;
                const _errs6 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate22.errors = [{ instancePath: instancePath + "/accepted_seq", schemaPath: "#/properties/accepted_seq/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs6) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 < 0 || isNaN(data2)) {
                      validate22.errors = [{ instancePath: instancePath + "/accepted_seq", schemaPath: "#/properties/accepted_seq/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.session_id !== void 0) {
                  let data3 = data.session_id;
                  const _errs8 = errors;
                  if (errors === _errs8) {
                    if (errors === _errs8) {
                      if (typeof data3 === "string") {
                        if (!formats2.test(data3)) {
                          validate22.errors = [{ instancePath: instancePath + "/session_id", schemaPath: "#/properties/session_id/format", keyword: "format", params: { format: "uuid" }, message: 'must match format "uuid"' }];
                          return false;
                        }
                      } else {
                        validate22.errors = [{ instancePath: instancePath + "/session_id", schemaPath: "#/properties/session_id/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                        return false;
                      }
                    }
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.rotated_token !== void 0) {
                    let data4 = data.rotated_token;
                    const _errs10 = errors;
                    if (typeof data4 !== "string" && data4 !== null) {
                      validate22.errors = [{ instancePath: instancePath + "/rotated_token", schemaPath: "#/properties/rotated_token/type", keyword: "type", params: { type: schema33.properties.rotated_token.type }, message: "must be string,null" }];
                      return false;
                    }
                    if (errors === _errs10) {
                      if (typeof data4 === "string") {
                        if (func1(data4) > 256) {
                          validate22.errors = [{ instancePath: instancePath + "/rotated_token", schemaPath: "#/properties/rotated_token/maxLength", keyword: "maxLength", params: { limit: 256 }, message: "must NOT have more than 256 characters" }];
                          return false;
                        } else {
                          if (func1(data4) < 32) {
                            validate22.errors = [{ instancePath: instancePath + "/rotated_token", schemaPath: "#/properties/rotated_token/minLength", keyword: "minLength", params: { limit: 32 }, message: "must NOT have fewer than 32 characters" }];
                            return false;
                          }
                        }
                      }
                    }
                    var valid0 = _errs10 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.config !== void 0) {
                      let data5 = data.config;
                      const _errs12 = errors;
                      const _errs13 = errors;
                      if (errors === _errs13) {
                        if (data5 && typeof data5 == "object" && !Array.isArray(data5)) {
                          let missing1;
                          if (data5.heartbeat_interval_secs === void 0 && (missing1 = "heartbeat_interval_secs") || data5.max_batch_entries === void 0 && (missing1 = "max_batch_entries") || data5.flush_interval_ms === void 0 && (missing1 = "flush_interval_ms") || data5.log_sources === void 0 && (missing1 = "log_sources") || data5.probe_concurrency === void 0 && (missing1 = "probe_concurrency")) {
                            validate22.errors = [{ instancePath: instancePath + "/config", schemaPath: "defs.json#/$defs/AgentConfig/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                            return false;
                          } else {
                            const _errs15 = errors;
                            for (const key1 in data5) {
                              if (!(key1 === "heartbeat_interval_secs" || key1 === "max_batch_entries" || key1 === "flush_interval_ms" || key1 === "metrics_interval_secs" || key1 === "probe_concurrency" || key1 === "log_sources")) {
                                validate22.errors = [{ instancePath: instancePath + "/config", schemaPath: "defs.json#/$defs/AgentConfig/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                                return false;
                                break;
                              }
                            }
                            if (_errs15 === errors) {
                              if (data5.heartbeat_interval_secs !== void 0) {
                                let data6 = data5.heartbeat_interval_secs;
                                const _errs16 = errors;
                                if (!(typeof data6 == "number" && (!(data6 % 1) && !isNaN(data6)) && isFinite(data6))) {
                                  validate22.errors = [{ instancePath: instancePath + "/config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                  return false;
                                }
                                if (errors === _errs16) {
                                  if (typeof data6 == "number" && isFinite(data6)) {
                                    if (data6 > 600 || isNaN(data6)) {
                                      validate22.errors = [{ instancePath: instancePath + "/config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/maximum", keyword: "maximum", params: { comparison: "<=", limit: 600 }, message: "must be <= 600" }];
                                      return false;
                                    } else {
                                      if (data6 < 5 || isNaN(data6)) {
                                        validate22.errors = [{ instancePath: instancePath + "/config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 5 }, message: "must be >= 5" }];
                                        return false;
                                      }
                                    }
                                  }
                                }
                                var valid2 = _errs16 === errors;
                              } else {
                                var valid2 = true;
                              }
                              if (valid2) {
                                if (data5.max_batch_entries !== void 0) {
                                  let data7 = data5.max_batch_entries;
                                  const _errs18 = errors;
                                  if (!(typeof data7 == "number" && (!(data7 % 1) && !isNaN(data7)) && isFinite(data7))) {
                                    validate22.errors = [{ instancePath: instancePath + "/config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                    return false;
                                  }
                                  if (errors === _errs18) {
                                    if (typeof data7 == "number" && isFinite(data7)) {
                                      if (data7 > 65535 || isNaN(data7)) {
                                        validate22.errors = [{ instancePath: instancePath + "/config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/maximum", keyword: "maximum", params: { comparison: "<=", limit: 65535 }, message: "must be <= 65535" }];
                                        return false;
                                      } else {
                                        if (data7 < 1 || isNaN(data7)) {
                                          validate22.errors = [{ instancePath: instancePath + "/config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                          return false;
                                        }
                                      }
                                    }
                                  }
                                  var valid2 = _errs18 === errors;
                                } else {
                                  var valid2 = true;
                                }
                                if (valid2) {
                                  if (data5.flush_interval_ms !== void 0) {
                                    let data8 = data5.flush_interval_ms;
                                    const _errs20 = errors;
                                    if (!(typeof data8 == "number" && (!(data8 % 1) && !isNaN(data8)) && isFinite(data8))) {
                                      validate22.errors = [{ instancePath: instancePath + "/config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                      return false;
                                    }
                                    if (errors === _errs20) {
                                      if (typeof data8 == "number" && isFinite(data8)) {
                                        if (data8 > 6e4 || isNaN(data8)) {
                                          validate22.errors = [{ instancePath: instancePath + "/config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/maximum", keyword: "maximum", params: { comparison: "<=", limit: 6e4 }, message: "must be <= 60000" }];
                                          return false;
                                        } else {
                                          if (data8 < 10 || isNaN(data8)) {
                                            validate22.errors = [{ instancePath: instancePath + "/config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 10 }, message: "must be >= 10" }];
                                            return false;
                                          }
                                        }
                                      }
                                    }
                                    var valid2 = _errs20 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data5.metrics_interval_secs !== void 0) {
                                      let data9 = data5.metrics_interval_secs;
                                      const _errs22 = errors;
                                      if (!(typeof data9 == "number" && (!(data9 % 1) && !isNaN(data9)) && isFinite(data9)) && data9 !== null) {
                                        validate22.errors = [{ instancePath: instancePath + "/config/metrics_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/metrics_interval_secs/type", keyword: "type", params: { type: schema35.properties.metrics_interval_secs.type }, message: "must be integer,null" }];
                                        return false;
                                      }
                                      if (errors === _errs22) {
                                        if (typeof data9 == "number" && isFinite(data9)) {
                                          if (data9 < 1 || isNaN(data9)) {
                                            validate22.errors = [{ instancePath: instancePath + "/config/metrics_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/metrics_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                            return false;
                                          }
                                        }
                                      }
                                      var valid2 = _errs22 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                    if (valid2) {
                                      if (data5.probe_concurrency !== void 0) {
                                        let data10 = data5.probe_concurrency;
                                        const _errs24 = errors;
                                        if (!(typeof data10 == "number" && (!(data10 % 1) && !isNaN(data10)) && isFinite(data10))) {
                                          validate22.errors = [{ instancePath: instancePath + "/config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                          return false;
                                        }
                                        if (errors === _errs24) {
                                          if (typeof data10 == "number" && isFinite(data10)) {
                                            if (data10 > 64 || isNaN(data10)) {
                                              validate22.errors = [{ instancePath: instancePath + "/config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/maximum", keyword: "maximum", params: { comparison: "<=", limit: 64 }, message: "must be <= 64" }];
                                              return false;
                                            } else {
                                              if (data10 < 1 || isNaN(data10)) {
                                                validate22.errors = [{ instancePath: instancePath + "/config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
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
                                        if (data5.log_sources !== void 0) {
                                          let data11 = data5.log_sources;
                                          const _errs26 = errors;
                                          if (errors === _errs26) {
                                            if (Array.isArray(data11)) {
                                              var valid3 = true;
                                              const len0 = data11.length;
                                              for (let i0 = 0; i0 < len0; i0++) {
                                                let data12 = data11[i0];
                                                const _errs28 = errors;
                                                if (errors === _errs28) {
                                                  if (data12 && typeof data12 == "object" && !Array.isArray(data12)) {
                                                    let missing2;
                                                    if (data12.kind === void 0 && (missing2 = "kind")) {
                                                      validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0, schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/required", keyword: "required", params: { missingProperty: missing2 }, message: "must have required property '" + missing2 + "'" }];
                                                      return false;
                                                    } else {
                                                      if (data12.kind !== void 0) {
                                                        let data13 = data12.kind;
                                                        const _errs30 = errors;
                                                        if (typeof data13 !== "string") {
                                                          validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/kind", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/kind/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                          return false;
                                                        }
                                                        if (!(data13 === "journald" || data13 === "file" || data13 === "docker" || data13 === "custom")) {
                                                          validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/kind", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/kind/enum", keyword: "enum", params: { allowedValues: schema35.properties.log_sources.items.properties.kind.enum }, message: "must be equal to one of the allowed values" }];
                                                          return false;
                                                        }
                                                        var valid4 = _errs30 === errors;
                                                      } else {
                                                        var valid4 = true;
                                                      }
                                                      if (valid4) {
                                                        if (data12.path !== void 0) {
                                                          const _errs32 = errors;
                                                          if (typeof data12.path !== "string") {
                                                            validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/path", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                            return false;
                                                          }
                                                          var valid4 = _errs32 === errors;
                                                        } else {
                                                          var valid4 = true;
                                                        }
                                                        if (valid4) {
                                                          if (data12.filter !== void 0) {
                                                            let data15 = data12.filter;
                                                            const _errs34 = errors;
                                                            if (typeof data15 !== "string" && data15 !== null) {
                                                              validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/filter", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/filter/type", keyword: "type", params: { type: schema35.properties.log_sources.items.properties.filter.type }, message: "must be string,null" }];
                                                              return false;
                                                            }
                                                            var valid4 = _errs34 === errors;
                                                          } else {
                                                            var valid4 = true;
                                                          }
                                                          if (valid4) {
                                                            if (data12.labels !== void 0) {
                                                              let data16 = data12.labels;
                                                              const _errs36 = errors;
                                                              if (errors === _errs36) {
                                                                if (data16 && typeof data16 == "object" && !Array.isArray(data16)) {
                                                                  for (const key2 in data16) {
                                                                    const _errs39 = errors;
                                                                    if (typeof data16[key2] !== "string") {
                                                                      validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/labels/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/labels/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                                      return false;
                                                                    }
                                                                    var valid5 = _errs39 === errors;
                                                                    if (!valid5) {
                                                                      break;
                                                                    }
                                                                  }
                                                                } else {
                                                                  validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/labels", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/labels/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                                                  return false;
                                                                }
                                                              }
                                                              var valid4 = _errs36 === errors;
                                                            } else {
                                                              var valid4 = true;
                                                            }
                                                            if (valid4) {
                                                              if (data12.start_at !== void 0) {
                                                                let data18 = data12.start_at;
                                                                const _errs41 = errors;
                                                                if (typeof data18 !== "string") {
                                                                  validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/start_at", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/start_at/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                                  return false;
                                                                }
                                                                if (!(data18 === "beginning" || data18 === "end")) {
                                                                  validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/start_at", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/start_at/enum", keyword: "enum", params: { allowedValues: schema35.properties.log_sources.items.properties.start_at.enum }, message: "must be equal to one of the allowed values" }];
                                                                  return false;
                                                                }
                                                                var valid4 = _errs41 === errors;
                                                              } else {
                                                                var valid4 = true;
                                                              }
                                                            }
                                                          }
                                                        }
                                                      }
                                                    }
                                                  } else {
                                                    validate22.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0, schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                                    return false;
                                                  }
                                                }
                                                var valid3 = _errs28 === errors;
                                                if (!valid3) {
                                                  break;
                                                }
                                              }
                                            } else {
                                              validate22.errors = [{ instancePath: instancePath + "/config/log_sources", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                              return false;
                                            }
                                          }
                                          var valid2 = _errs26 === errors;
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
                          validate22.errors = [{ instancePath: instancePath + "/config", schemaPath: "defs.json#/$defs/AgentConfig/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                          return false;
                        }
                      }
                      var valid0 = _errs12 === errors;
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
    } else {
      validate22.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate22.errors = vErrors;
  return errors === 0;
}
var validateAgentShutdownParams = validate24;
var schema36 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/agent.shutdown.params.json", "title": "AgentShutdownParams", "description": "agent.shutdown params: the server announces a planned disconnect.", "type": "object", "required": ["reason", "drain_seconds"], "additionalProperties": false, "properties": { "reason": { "type": "string", "enum": ["ServerReload", "Revoked", "Decommission"] }, "drain_seconds": { "type": "integer", "minimum": 0, "maximum": 300 } } };
function validate24(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate24.evaluated || (validate24.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.reason === void 0 && (missing0 = "reason") || data.drain_seconds === void 0 && (missing0 = "drain_seconds")) {
        validate24.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "reason" || key0 === "drain_seconds")) {
            validate24.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.reason !== void 0) {
            let data0 = data.reason;
            const _errs2 = errors;
            if (typeof data0 !== "string") {
              validate24.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            if (!(data0 === "ServerReload" || data0 === "Revoked" || data0 === "Decommission")) {
              validate24.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/enum", keyword: "enum", params: { allowedValues: schema36.properties.reason.enum }, message: "must be equal to one of the allowed values" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.drain_seconds !== void 0) {
              let data1 = data.drain_seconds;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate24.errors = [{ instancePath: instancePath + "/drain_seconds", schemaPath: "#/properties/drain_seconds/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 300 || isNaN(data1)) {
                    validate24.errors = [{ instancePath: instancePath + "/drain_seconds", schemaPath: "#/properties/drain_seconds/maximum", keyword: "maximum", params: { comparison: "<=", limit: 300 }, message: "must be <= 300" }];
                    return false;
                  } else {
                    if (data1 < 0 || isNaN(data1)) {
                      validate24.errors = [{ instancePath: instancePath + "/drain_seconds", schemaPath: "#/properties/drain_seconds/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate24.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate24.errors = vErrors;
  return errors === 0;
}
var validateConfigUpdateParams = validate25;
var schema37 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/config.update.params.json", "title": "ConfigUpdateParams", "description": "config.update params: hot-reload of AgentConfig, optionally staged with apply_after.", "type": "object", "required": ["config"], "additionalProperties": false, "properties": { "apply_after": { "type": ["string", "null"], "format": "date-time" }, "config": { "$ref": "defs.json#/$defs/AgentConfig" } } };
function validate25(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate25.evaluated || (validate25.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.config === void 0 && (missing0 = "config")) {
        validate25.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "apply_after" || key0 === "config")) {
            validate25.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.apply_after !== void 0) {
            let data0 = data.apply_after;
            const _errs2 = errors;
            if (typeof data0 !== "string" && data0 !== null) {
              validate25.errors = [{ instancePath: instancePath + "/apply_after", schemaPath: "#/properties/apply_after/type", keyword: "type", params: { type: schema37.properties.apply_after.type }, message: "must be string,null" }];
              return false;
            }
            if (errors === _errs2) {
              if (errors === _errs2) {
                if (typeof data0 === "string") {
                  if (!formats0.validate(data0)) {
                    validate25.errors = [{ instancePath: instancePath + "/apply_after", schemaPath: "#/properties/apply_after/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                    return false;
                  }
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.config !== void 0) {
              let data1 = data.config;
              const _errs4 = errors;
              const _errs5 = errors;
              if (errors === _errs5) {
                if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
                  let missing1;
                  if (data1.heartbeat_interval_secs === void 0 && (missing1 = "heartbeat_interval_secs") || data1.max_batch_entries === void 0 && (missing1 = "max_batch_entries") || data1.flush_interval_ms === void 0 && (missing1 = "flush_interval_ms") || data1.log_sources === void 0 && (missing1 = "log_sources") || data1.probe_concurrency === void 0 && (missing1 = "probe_concurrency")) {
                    validate25.errors = [{ instancePath: instancePath + "/config", schemaPath: "defs.json#/$defs/AgentConfig/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                    return false;
                  } else {
                    const _errs7 = errors;
                    for (const key1 in data1) {
                      if (!(key1 === "heartbeat_interval_secs" || key1 === "max_batch_entries" || key1 === "flush_interval_ms" || key1 === "metrics_interval_secs" || key1 === "probe_concurrency" || key1 === "log_sources")) {
                        validate25.errors = [{ instancePath: instancePath + "/config", schemaPath: "defs.json#/$defs/AgentConfig/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                        return false;
                        break;
                      }
                    }
                    if (_errs7 === errors) {
                      if (data1.heartbeat_interval_secs !== void 0) {
                        let data2 = data1.heartbeat_interval_secs;
                        const _errs8 = errors;
                        if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                          validate25.errors = [{ instancePath: instancePath + "/config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                          return false;
                        }
                        if (errors === _errs8) {
                          if (typeof data2 == "number" && isFinite(data2)) {
                            if (data2 > 600 || isNaN(data2)) {
                              validate25.errors = [{ instancePath: instancePath + "/config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/maximum", keyword: "maximum", params: { comparison: "<=", limit: 600 }, message: "must be <= 600" }];
                              return false;
                            } else {
                              if (data2 < 5 || isNaN(data2)) {
                                validate25.errors = [{ instancePath: instancePath + "/config/heartbeat_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/heartbeat_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 5 }, message: "must be >= 5" }];
                                return false;
                              }
                            }
                          }
                        }
                        var valid2 = _errs8 === errors;
                      } else {
                        var valid2 = true;
                      }
                      if (valid2) {
                        if (data1.max_batch_entries !== void 0) {
                          let data3 = data1.max_batch_entries;
                          const _errs10 = errors;
                          if (!(typeof data3 == "number" && (!(data3 % 1) && !isNaN(data3)) && isFinite(data3))) {
                            validate25.errors = [{ instancePath: instancePath + "/config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                            return false;
                          }
                          if (errors === _errs10) {
                            if (typeof data3 == "number" && isFinite(data3)) {
                              if (data3 > 65535 || isNaN(data3)) {
                                validate25.errors = [{ instancePath: instancePath + "/config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/maximum", keyword: "maximum", params: { comparison: "<=", limit: 65535 }, message: "must be <= 65535" }];
                                return false;
                              } else {
                                if (data3 < 1 || isNaN(data3)) {
                                  validate25.errors = [{ instancePath: instancePath + "/config/max_batch_entries", schemaPath: "defs.json#/$defs/AgentConfig/properties/max_batch_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                  return false;
                                }
                              }
                            }
                          }
                          var valid2 = _errs10 === errors;
                        } else {
                          var valid2 = true;
                        }
                        if (valid2) {
                          if (data1.flush_interval_ms !== void 0) {
                            let data4 = data1.flush_interval_ms;
                            const _errs12 = errors;
                            if (!(typeof data4 == "number" && (!(data4 % 1) && !isNaN(data4)) && isFinite(data4))) {
                              validate25.errors = [{ instancePath: instancePath + "/config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                              return false;
                            }
                            if (errors === _errs12) {
                              if (typeof data4 == "number" && isFinite(data4)) {
                                if (data4 > 6e4 || isNaN(data4)) {
                                  validate25.errors = [{ instancePath: instancePath + "/config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/maximum", keyword: "maximum", params: { comparison: "<=", limit: 6e4 }, message: "must be <= 60000" }];
                                  return false;
                                } else {
                                  if (data4 < 10 || isNaN(data4)) {
                                    validate25.errors = [{ instancePath: instancePath + "/config/flush_interval_ms", schemaPath: "defs.json#/$defs/AgentConfig/properties/flush_interval_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 10 }, message: "must be >= 10" }];
                                    return false;
                                  }
                                }
                              }
                            }
                            var valid2 = _errs12 === errors;
                          } else {
                            var valid2 = true;
                          }
                          if (valid2) {
                            if (data1.metrics_interval_secs !== void 0) {
                              let data5 = data1.metrics_interval_secs;
                              const _errs14 = errors;
                              if (!(typeof data5 == "number" && (!(data5 % 1) && !isNaN(data5)) && isFinite(data5)) && data5 !== null) {
                                validate25.errors = [{ instancePath: instancePath + "/config/metrics_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/metrics_interval_secs/type", keyword: "type", params: { type: schema35.properties.metrics_interval_secs.type }, message: "must be integer,null" }];
                                return false;
                              }
                              if (errors === _errs14) {
                                if (typeof data5 == "number" && isFinite(data5)) {
                                  if (data5 < 1 || isNaN(data5)) {
                                    validate25.errors = [{ instancePath: instancePath + "/config/metrics_interval_secs", schemaPath: "defs.json#/$defs/AgentConfig/properties/metrics_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                    return false;
                                  }
                                }
                              }
                              var valid2 = _errs14 === errors;
                            } else {
                              var valid2 = true;
                            }
                            if (valid2) {
                              if (data1.probe_concurrency !== void 0) {
                                let data6 = data1.probe_concurrency;
                                const _errs16 = errors;
                                if (!(typeof data6 == "number" && (!(data6 % 1) && !isNaN(data6)) && isFinite(data6))) {
                                  validate25.errors = [{ instancePath: instancePath + "/config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                  return false;
                                }
                                if (errors === _errs16) {
                                  if (typeof data6 == "number" && isFinite(data6)) {
                                    if (data6 > 64 || isNaN(data6)) {
                                      validate25.errors = [{ instancePath: instancePath + "/config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/maximum", keyword: "maximum", params: { comparison: "<=", limit: 64 }, message: "must be <= 64" }];
                                      return false;
                                    } else {
                                      if (data6 < 1 || isNaN(data6)) {
                                        validate25.errors = [{ instancePath: instancePath + "/config/probe_concurrency", schemaPath: "defs.json#/$defs/AgentConfig/properties/probe_concurrency/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                        return false;
                                      }
                                    }
                                  }
                                }
                                var valid2 = _errs16 === errors;
                              } else {
                                var valid2 = true;
                              }
                              if (valid2) {
                                if (data1.log_sources !== void 0) {
                                  let data7 = data1.log_sources;
                                  const _errs18 = errors;
                                  if (errors === _errs18) {
                                    if (Array.isArray(data7)) {
                                      var valid3 = true;
                                      const len0 = data7.length;
                                      for (let i0 = 0; i0 < len0; i0++) {
                                        let data8 = data7[i0];
                                        const _errs20 = errors;
                                        if (errors === _errs20) {
                                          if (data8 && typeof data8 == "object" && !Array.isArray(data8)) {
                                            let missing2;
                                            if (data8.kind === void 0 && (missing2 = "kind")) {
                                              validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0, schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/required", keyword: "required", params: { missingProperty: missing2 }, message: "must have required property '" + missing2 + "'" }];
                                              return false;
                                            } else {
                                              if (data8.kind !== void 0) {
                                                let data9 = data8.kind;
                                                const _errs22 = errors;
                                                if (typeof data9 !== "string") {
                                                  validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/kind", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/kind/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                  return false;
                                                }
                                                if (!(data9 === "journald" || data9 === "file" || data9 === "docker" || data9 === "custom")) {
                                                  validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/kind", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/kind/enum", keyword: "enum", params: { allowedValues: schema35.properties.log_sources.items.properties.kind.enum }, message: "must be equal to one of the allowed values" }];
                                                  return false;
                                                }
                                                var valid4 = _errs22 === errors;
                                              } else {
                                                var valid4 = true;
                                              }
                                              if (valid4) {
                                                if (data8.path !== void 0) {
                                                  const _errs24 = errors;
                                                  if (typeof data8.path !== "string") {
                                                    validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/path", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                    return false;
                                                  }
                                                  var valid4 = _errs24 === errors;
                                                } else {
                                                  var valid4 = true;
                                                }
                                                if (valid4) {
                                                  if (data8.filter !== void 0) {
                                                    let data11 = data8.filter;
                                                    const _errs26 = errors;
                                                    if (typeof data11 !== "string" && data11 !== null) {
                                                      validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/filter", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/filter/type", keyword: "type", params: { type: schema35.properties.log_sources.items.properties.filter.type }, message: "must be string,null" }];
                                                      return false;
                                                    }
                                                    var valid4 = _errs26 === errors;
                                                  } else {
                                                    var valid4 = true;
                                                  }
                                                  if (valid4) {
                                                    if (data8.labels !== void 0) {
                                                      let data12 = data8.labels;
                                                      const _errs28 = errors;
                                                      if (errors === _errs28) {
                                                        if (data12 && typeof data12 == "object" && !Array.isArray(data12)) {
                                                          for (const key2 in data12) {
                                                            const _errs31 = errors;
                                                            if (typeof data12[key2] !== "string") {
                                                              validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/labels/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/labels/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                              return false;
                                                            }
                                                            var valid5 = _errs31 === errors;
                                                            if (!valid5) {
                                                              break;
                                                            }
                                                          }
                                                        } else {
                                                          validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/labels", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/labels/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                                          return false;
                                                        }
                                                      }
                                                      var valid4 = _errs28 === errors;
                                                    } else {
                                                      var valid4 = true;
                                                    }
                                                    if (valid4) {
                                                      if (data8.start_at !== void 0) {
                                                        let data14 = data8.start_at;
                                                        const _errs33 = errors;
                                                        if (typeof data14 !== "string") {
                                                          validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/start_at", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/start_at/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                          return false;
                                                        }
                                                        if (!(data14 === "beginning" || data14 === "end")) {
                                                          validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0 + "/start_at", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/properties/start_at/enum", keyword: "enum", params: { allowedValues: schema35.properties.log_sources.items.properties.start_at.enum }, message: "must be equal to one of the allowed values" }];
                                                          return false;
                                                        }
                                                        var valid4 = _errs33 === errors;
                                                      } else {
                                                        var valid4 = true;
                                                      }
                                                    }
                                                  }
                                                }
                                              }
                                            }
                                          } else {
                                            validate25.errors = [{ instancePath: instancePath + "/config/log_sources/" + i0, schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                            return false;
                                          }
                                        }
                                        var valid3 = _errs20 === errors;
                                        if (!valid3) {
                                          break;
                                        }
                                      }
                                    } else {
                                      validate25.errors = [{ instancePath: instancePath + "/config/log_sources", schemaPath: "defs.json#/$defs/AgentConfig/properties/log_sources/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                                      return false;
                                    }
                                  }
                                  var valid2 = _errs18 === errors;
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
                  validate25.errors = [{ instancePath: instancePath + "/config", schemaPath: "defs.json#/$defs/AgentConfig/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                  return false;
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate25.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate25.errors = vErrors;
  return errors === 0;
}
var validateSeverity = validate26;
var schema39 = { "title": "Severity", "description": "Syslog severity name (RFC 5424 order, most severe first).", "type": "string", "enum": ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"] };
function validate26(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate26.evaluated || (validate26.evaluated = { "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (typeof data !== "string") {
    validate26.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
    return false;
  }
  if (!(data === "emerg" || data === "alert" || data === "crit" || data === "err" || data === "warning" || data === "notice" || data === "info" || data === "debug")) {
    validate26.errors = [{ instancePath, schemaPath: "#/enum", keyword: "enum", params: { allowedValues: schema39.enum }, message: "must be equal to one of the allowed values" }];
    return false;
  }
  validate26.errors = vErrors;
  return errors === 0;
}
var validateLogSource = validate27;
var schema40 = { "title": "LogSource", "description": 'Where an entry came from: "journald", or "file:<path>", "docker:<container>", "custom:<name>".', "oneOf": [{ "type": "string", "enum": ["journald"] }, { "type": "string", "pattern": "^file:.+$" }, { "type": "string", "pattern": "^docker:.+$" }, { "type": "string", "pattern": "^custom:.+$" }] };
var pattern5 = /* @__PURE__ */ new RegExp("^file:.+$", "u");
var pattern6 = /* @__PURE__ */ new RegExp("^docker:.+$", "u");
var pattern7 = /* @__PURE__ */ new RegExp("^custom:.+$", "u");
function validate27(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate27.evaluated || (validate27.evaluated = { "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  const _errs0 = errors;
  let valid0 = false;
  let passing0 = null;
  const _errs1 = errors;
  if (typeof data !== "string") {
    const err0 = { instancePath, schemaPath: "#/oneOf/0/type", keyword: "type", params: { type: "string" }, message: "must be string" };
    if (vErrors === null) {
      vErrors = [err0];
    } else {
      vErrors.push(err0);
    }
    errors++;
  }
  if (!(data === "journald")) {
    const err1 = { instancePath, schemaPath: "#/oneOf/0/enum", keyword: "enum", params: { allowedValues: schema40.oneOf[0].enum }, message: "must be equal to one of the allowed values" };
    if (vErrors === null) {
      vErrors = [err1];
    } else {
      vErrors.push(err1);
    }
    errors++;
  }
  var _valid0 = _errs1 === errors;
  if (_valid0) {
    valid0 = true;
    passing0 = 0;
  }
  const _errs3 = errors;
  if (errors === _errs3) {
    if (typeof data === "string") {
      if (!pattern5.test(data)) {
        const err2 = { instancePath, schemaPath: "#/oneOf/1/pattern", keyword: "pattern", params: { pattern: "^file:.+$" }, message: 'must match pattern "^file:.+$"' };
        if (vErrors === null) {
          vErrors = [err2];
        } else {
          vErrors.push(err2);
        }
        errors++;
      }
    } else {
      const err3 = { instancePath, schemaPath: "#/oneOf/1/type", keyword: "type", params: { type: "string" }, message: "must be string" };
      if (vErrors === null) {
        vErrors = [err3];
      } else {
        vErrors.push(err3);
      }
      errors++;
    }
  }
  var _valid0 = _errs3 === errors;
  if (_valid0 && valid0) {
    valid0 = false;
    passing0 = [passing0, 1];
  } else {
    if (_valid0) {
      valid0 = true;
      passing0 = 1;
    }
    const _errs5 = errors;
    if (errors === _errs5) {
      if (typeof data === "string") {
        if (!pattern6.test(data)) {
          const err4 = { instancePath, schemaPath: "#/oneOf/2/pattern", keyword: "pattern", params: { pattern: "^docker:.+$" }, message: 'must match pattern "^docker:.+$"' };
          if (vErrors === null) {
            vErrors = [err4];
          } else {
            vErrors.push(err4);
          }
          errors++;
        }
      } else {
        const err5 = { instancePath, schemaPath: "#/oneOf/2/type", keyword: "type", params: { type: "string" }, message: "must be string" };
        if (vErrors === null) {
          vErrors = [err5];
        } else {
          vErrors.push(err5);
        }
        errors++;
      }
    }
    var _valid0 = _errs5 === errors;
    if (_valid0 && valid0) {
      valid0 = false;
      passing0 = [passing0, 2];
    } else {
      if (_valid0) {
        valid0 = true;
        passing0 = 2;
      }
      const _errs7 = errors;
      if (errors === _errs7) {
        if (typeof data === "string") {
          if (!pattern7.test(data)) {
            const err6 = { instancePath, schemaPath: "#/oneOf/3/pattern", keyword: "pattern", params: { pattern: "^custom:.+$" }, message: 'must match pattern "^custom:.+$"' };
            if (vErrors === null) {
              vErrors = [err6];
            } else {
              vErrors.push(err6);
            }
            errors++;
          }
        } else {
          const err7 = { instancePath, schemaPath: "#/oneOf/3/type", keyword: "type", params: { type: "string" }, message: "must be string" };
          if (vErrors === null) {
            vErrors = [err7];
          } else {
            vErrors.push(err7);
          }
          errors++;
        }
      }
      var _valid0 = _errs7 === errors;
      if (_valid0 && valid0) {
        valid0 = false;
        passing0 = [passing0, 3];
      } else {
        if (_valid0) {
          valid0 = true;
          passing0 = 3;
        }
      }
    }
  }
  if (!valid0) {
    const err8 = { instancePath, schemaPath: "#/oneOf", keyword: "oneOf", params: { passingSchemas: passing0 }, message: "must match exactly one schema in oneOf" };
    if (vErrors === null) {
      vErrors = [err8];
    } else {
      vErrors.push(err8);
    }
    errors++;
    validate27.errors = vErrors;
    return false;
  } else {
    errors = _errs0;
    if (vErrors !== null) {
      if (_errs0) {
        vErrors.length = _errs0;
      } else {
        vErrors = null;
      }
    }
  }
  validate27.errors = vErrors;
  return errors === 0;
}
var validateLogBatchEntryAjv = validate28;
var schema41 = { "title": "LogBatchEntry", "description": "One parsed log entry inside logs.push. seq is the agent-assigned sequence number (contiguous inside a batch, never reused).", "type": "object", "required": ["seq", "ts", "severity", "message", "source"], "additionalProperties": false, "properties": { "seq": { "type": "integer", "minimum": 0 }, "ts": { "type": "string", "format": "date-time" }, "severity": { "$ref": "defs.json#/$defs/Severity" }, "facility": { "type": ["string", "null"] }, "app_name": { "type": ["string", "null"] }, "process_id": { "type": ["string", "null"] }, "message": { "type": "string", "maxLength": 65536 }, "source": { "$ref": "defs.json#/$defs/LogSource" }, "metadata": { "type": ["object", "null"] } } };
var func7 = Object.prototype.hasOwnProperty;
function validate28(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate28.evaluated || (validate28.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.seq === void 0 && (missing0 = "seq") || data.ts === void 0 && (missing0 = "ts") || data.severity === void 0 && (missing0 = "severity") || data.message === void 0 && (missing0 = "message") || data.source === void 0 && (missing0 = "source")) {
        validate28.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!func7.call(schema41.properties, key0)) {
            validate28.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.seq !== void 0) {
            let data0 = data.seq;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate28.errors = [{ instancePath: instancePath + "/seq", schemaPath: "#/properties/seq/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 < 0 || isNaN(data0)) {
                  validate28.errors = [{ instancePath: instancePath + "/seq", schemaPath: "#/properties/seq/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                  return false;
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.ts !== void 0) {
              let data1 = data.ts;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (errors === _errs4) {
                  if (typeof data1 === "string") {
                    if (!formats0.validate(data1)) {
                      validate28.errors = [{ instancePath: instancePath + "/ts", schemaPath: "#/properties/ts/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                      return false;
                    }
                  } else {
                    validate28.errors = [{ instancePath: instancePath + "/ts", schemaPath: "#/properties/ts/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.severity !== void 0) {
                let data2 = data.severity;
                const _errs6 = errors;
                if (typeof data2 !== "string") {
                  validate28.errors = [{ instancePath: instancePath + "/severity", schemaPath: "defs.json#/$defs/Severity/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
                if (!(data2 === "emerg" || data2 === "alert" || data2 === "crit" || data2 === "err" || data2 === "warning" || data2 === "notice" || data2 === "info" || data2 === "debug")) {
                  validate28.errors = [{ instancePath: instancePath + "/severity", schemaPath: "defs.json#/$defs/Severity/enum", keyword: "enum", params: { allowedValues: schema39.enum }, message: "must be equal to one of the allowed values" }];
                  return false;
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.facility !== void 0) {
                  let data3 = data.facility;
                  const _errs9 = errors;
                  if (typeof data3 !== "string" && data3 !== null) {
                    validate28.errors = [{ instancePath: instancePath + "/facility", schemaPath: "#/properties/facility/type", keyword: "type", params: { type: schema41.properties.facility.type }, message: "must be string,null" }];
                    return false;
                  }
                  var valid0 = _errs9 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.app_name !== void 0) {
                    let data4 = data.app_name;
                    const _errs11 = errors;
                    if (typeof data4 !== "string" && data4 !== null) {
                      validate28.errors = [{ instancePath: instancePath + "/app_name", schemaPath: "#/properties/app_name/type", keyword: "type", params: { type: schema41.properties.app_name.type }, message: "must be string,null" }];
                      return false;
                    }
                    var valid0 = _errs11 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.process_id !== void 0) {
                      let data5 = data.process_id;
                      const _errs13 = errors;
                      if (typeof data5 !== "string" && data5 !== null) {
                        validate28.errors = [{ instancePath: instancePath + "/process_id", schemaPath: "#/properties/process_id/type", keyword: "type", params: { type: schema41.properties.process_id.type }, message: "must be string,null" }];
                        return false;
                      }
                      var valid0 = _errs13 === errors;
                    } else {
                      var valid0 = true;
                    }
                    if (valid0) {
                      if (data.message !== void 0) {
                        let data6 = data.message;
                        const _errs15 = errors;
                        if (errors === _errs15) {
                          if (typeof data6 === "string") {
                            if (func1(data6) > 65536) {
                              validate28.errors = [{ instancePath: instancePath + "/message", schemaPath: "#/properties/message/maxLength", keyword: "maxLength", params: { limit: 65536 }, message: "must NOT have more than 65536 characters" }];
                              return false;
                            }
                          } else {
                            validate28.errors = [{ instancePath: instancePath + "/message", schemaPath: "#/properties/message/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                            return false;
                          }
                        }
                        var valid0 = _errs15 === errors;
                      } else {
                        var valid0 = true;
                      }
                      if (valid0) {
                        if (data.source !== void 0) {
                          let data7 = data.source;
                          const _errs17 = errors;
                          const _errs19 = errors;
                          let valid3 = false;
                          let passing0 = null;
                          const _errs20 = errors;
                          if (typeof data7 !== "string") {
                            const err0 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/0/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                            if (vErrors === null) {
                              vErrors = [err0];
                            } else {
                              vErrors.push(err0);
                            }
                            errors++;
                          }
                          if (!(data7 === "journald")) {
                            const err1 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/0/enum", keyword: "enum", params: { allowedValues: schema40.oneOf[0].enum }, message: "must be equal to one of the allowed values" };
                            if (vErrors === null) {
                              vErrors = [err1];
                            } else {
                              vErrors.push(err1);
                            }
                            errors++;
                          }
                          var _valid0 = _errs20 === errors;
                          if (_valid0) {
                            valid3 = true;
                            passing0 = 0;
                          }
                          const _errs22 = errors;
                          if (errors === _errs22) {
                            if (typeof data7 === "string") {
                              if (!pattern5.test(data7)) {
                                const err2 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/1/pattern", keyword: "pattern", params: { pattern: "^file:.+$" }, message: 'must match pattern "^file:.+$"' };
                                if (vErrors === null) {
                                  vErrors = [err2];
                                } else {
                                  vErrors.push(err2);
                                }
                                errors++;
                              }
                            } else {
                              const err3 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/1/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                              if (vErrors === null) {
                                vErrors = [err3];
                              } else {
                                vErrors.push(err3);
                              }
                              errors++;
                            }
                          }
                          var _valid0 = _errs22 === errors;
                          if (_valid0 && valid3) {
                            valid3 = false;
                            passing0 = [passing0, 1];
                          } else {
                            if (_valid0) {
                              valid3 = true;
                              passing0 = 1;
                            }
                            const _errs24 = errors;
                            if (errors === _errs24) {
                              if (typeof data7 === "string") {
                                if (!pattern6.test(data7)) {
                                  const err4 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/2/pattern", keyword: "pattern", params: { pattern: "^docker:.+$" }, message: 'must match pattern "^docker:.+$"' };
                                  if (vErrors === null) {
                                    vErrors = [err4];
                                  } else {
                                    vErrors.push(err4);
                                  }
                                  errors++;
                                }
                              } else {
                                const err5 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/2/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                                if (vErrors === null) {
                                  vErrors = [err5];
                                } else {
                                  vErrors.push(err5);
                                }
                                errors++;
                              }
                            }
                            var _valid0 = _errs24 === errors;
                            if (_valid0 && valid3) {
                              valid3 = false;
                              passing0 = [passing0, 2];
                            } else {
                              if (_valid0) {
                                valid3 = true;
                                passing0 = 2;
                              }
                              const _errs26 = errors;
                              if (errors === _errs26) {
                                if (typeof data7 === "string") {
                                  if (!pattern7.test(data7)) {
                                    const err6 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/3/pattern", keyword: "pattern", params: { pattern: "^custom:.+$" }, message: 'must match pattern "^custom:.+$"' };
                                    if (vErrors === null) {
                                      vErrors = [err6];
                                    } else {
                                      vErrors.push(err6);
                                    }
                                    errors++;
                                  }
                                } else {
                                  const err7 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf/3/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                                  if (vErrors === null) {
                                    vErrors = [err7];
                                  } else {
                                    vErrors.push(err7);
                                  }
                                  errors++;
                                }
                              }
                              var _valid0 = _errs26 === errors;
                              if (_valid0 && valid3) {
                                valid3 = false;
                                passing0 = [passing0, 3];
                              } else {
                                if (_valid0) {
                                  valid3 = true;
                                  passing0 = 3;
                                }
                              }
                            }
                          }
                          if (!valid3) {
                            const err8 = { instancePath: instancePath + "/source", schemaPath: "defs.json#/$defs/LogSource/oneOf", keyword: "oneOf", params: { passingSchemas: passing0 }, message: "must match exactly one schema in oneOf" };
                            if (vErrors === null) {
                              vErrors = [err8];
                            } else {
                              vErrors.push(err8);
                            }
                            errors++;
                            validate28.errors = vErrors;
                            return false;
                          } else {
                            errors = _errs19;
                            if (vErrors !== null) {
                              if (_errs19) {
                                vErrors.length = _errs19;
                              } else {
                                vErrors = null;
                              }
                            }
                          }
                          var valid0 = _errs17 === errors;
                        } else {
                          var valid0 = true;
                        }
                        if (valid0) {
                          if (data.metadata !== void 0) {
                            let data8 = data.metadata;
                            const _errs28 = errors;
                            if (!(data8 && typeof data8 == "object" && !Array.isArray(data8)) && data8 !== null) {
                              validate28.errors = [{ instancePath: instancePath + "/metadata", schemaPath: "#/properties/metadata/type", keyword: "type", params: { type: schema41.properties.metadata.type }, message: "must be object,null" }];
                              return false;
                            }
                            var valid0 = _errs28 === errors;
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
    } else {
      validate28.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate28.errors = vErrors;
  return errors === 0;
}
var validateMetricSample = validate29;
function validate29(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate29.evaluated || (validate29.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.name === void 0 && (missing0 = "name") || data.value === void 0 && (missing0 = "value")) {
        validate29.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "name" || key0 === "value" || key0 === "labels")) {
            validate29.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.name !== void 0) {
            let data0 = data.name;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 === "string") {
                if (func1(data0) > 128) {
                  validate29.errors = [{ instancePath: instancePath + "/name", schemaPath: "#/properties/name/maxLength", keyword: "maxLength", params: { limit: 128 }, message: "must NOT have more than 128 characters" }];
                  return false;
                } else {
                  if (func1(data0) < 1) {
                    validate29.errors = [{ instancePath: instancePath + "/name", schemaPath: "#/properties/name/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  }
                }
              } else {
                validate29.errors = [{ instancePath: instancePath + "/name", schemaPath: "#/properties/name/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.value !== void 0) {
              let data1 = data.value;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && isFinite(data1))) {
                validate29.errors = [{ instancePath: instancePath + "/value", schemaPath: "#/properties/value/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                return false;
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.labels !== void 0) {
                let data2 = data.labels;
                const _errs6 = errors;
                if (errors === _errs6) {
                  if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                    for (const key1 in data2) {
                      const _errs9 = errors;
                      if (typeof data2[key1] !== "string") {
                        validate29.errors = [{ instancePath: instancePath + "/labels/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/properties/labels/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                        return false;
                      }
                      var valid1 = _errs9 === errors;
                      if (!valid1) {
                        break;
                      }
                    }
                  } else {
                    validate29.errors = [{ instancePath: instancePath + "/labels", schemaPath: "#/properties/labels/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                    return false;
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate29.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate29.errors = vErrors;
  return errors === 0;
}
var validateProbeOutput = validate30;
var schema45 = { "title": "ProbeOutput", "description": 'Result of a probe: the probe-specific output plus process details. Returned as the result of probe.request (logically "probe.response").', "type": "object", "required": ["output", "duration_ms"], "additionalProperties": false, "properties": { "output": {}, "exit_code": { "type": ["integer", "null"] }, "stderr": { "type": ["string", "null"] }, "duration_ms": { "type": "integer", "minimum": 0 } } };
function validate30(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate30.evaluated || (validate30.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.output === void 0 && (missing0 = "output") || data.duration_ms === void 0 && (missing0 = "duration_ms")) {
        validate30.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "output" || key0 === "exit_code" || key0 === "stderr" || key0 === "duration_ms")) {
            validate30.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.exit_code !== void 0) {
            let data0 = data.exit_code;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0)) && data0 !== null) {
              validate30.errors = [{ instancePath: instancePath + "/exit_code", schemaPath: "#/properties/exit_code/type", keyword: "type", params: { type: schema45.properties.exit_code.type }, message: "must be integer,null" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.stderr !== void 0) {
              let data1 = data.stderr;
              const _errs4 = errors;
              if (typeof data1 !== "string" && data1 !== null) {
                validate30.errors = [{ instancePath: instancePath + "/stderr", schemaPath: "#/properties/stderr/type", keyword: "type", params: { type: schema45.properties.stderr.type }, message: "must be string,null" }];
                return false;
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.duration_ms !== void 0) {
                let data2 = data.duration_ms;
                const _errs6 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate30.errors = [{ instancePath: instancePath + "/duration_ms", schemaPath: "#/properties/duration_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs6) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 < 0 || isNaN(data2)) {
                      validate30.errors = [{ instancePath: instancePath + "/duration_ms", schemaPath: "#/properties/duration_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate30.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate30.errors = vErrors;
  return errors === 0;
}
var validateAgentConfig = validate31;
function validate31(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate31.evaluated || (validate31.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.heartbeat_interval_secs === void 0 && (missing0 = "heartbeat_interval_secs") || data.max_batch_entries === void 0 && (missing0 = "max_batch_entries") || data.flush_interval_ms === void 0 && (missing0 = "flush_interval_ms") || data.log_sources === void 0 && (missing0 = "log_sources") || data.probe_concurrency === void 0 && (missing0 = "probe_concurrency")) {
        validate31.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "heartbeat_interval_secs" || key0 === "max_batch_entries" || key0 === "flush_interval_ms" || key0 === "metrics_interval_secs" || key0 === "probe_concurrency" || key0 === "log_sources")) {
            validate31.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.heartbeat_interval_secs !== void 0) {
            let data0 = data.heartbeat_interval_secs;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate31.errors = [{ instancePath: instancePath + "/heartbeat_interval_secs", schemaPath: "#/properties/heartbeat_interval_secs/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 > 600 || isNaN(data0)) {
                  validate31.errors = [{ instancePath: instancePath + "/heartbeat_interval_secs", schemaPath: "#/properties/heartbeat_interval_secs/maximum", keyword: "maximum", params: { comparison: "<=", limit: 600 }, message: "must be <= 600" }];
                  return false;
                } else {
                  if (data0 < 5 || isNaN(data0)) {
                    validate31.errors = [{ instancePath: instancePath + "/heartbeat_interval_secs", schemaPath: "#/properties/heartbeat_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 5 }, message: "must be >= 5" }];
                    return false;
                  }
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.max_batch_entries !== void 0) {
              let data1 = data.max_batch_entries;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate31.errors = [{ instancePath: instancePath + "/max_batch_entries", schemaPath: "#/properties/max_batch_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 65535 || isNaN(data1)) {
                    validate31.errors = [{ instancePath: instancePath + "/max_batch_entries", schemaPath: "#/properties/max_batch_entries/maximum", keyword: "maximum", params: { comparison: "<=", limit: 65535 }, message: "must be <= 65535" }];
                    return false;
                  } else {
                    if (data1 < 1 || isNaN(data1)) {
                      validate31.errors = [{ instancePath: instancePath + "/max_batch_entries", schemaPath: "#/properties/max_batch_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.flush_interval_ms !== void 0) {
                let data2 = data.flush_interval_ms;
                const _errs6 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate31.errors = [{ instancePath: instancePath + "/flush_interval_ms", schemaPath: "#/properties/flush_interval_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs6) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 > 6e4 || isNaN(data2)) {
                      validate31.errors = [{ instancePath: instancePath + "/flush_interval_ms", schemaPath: "#/properties/flush_interval_ms/maximum", keyword: "maximum", params: { comparison: "<=", limit: 6e4 }, message: "must be <= 60000" }];
                      return false;
                    } else {
                      if (data2 < 10 || isNaN(data2)) {
                        validate31.errors = [{ instancePath: instancePath + "/flush_interval_ms", schemaPath: "#/properties/flush_interval_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 10 }, message: "must be >= 10" }];
                        return false;
                      }
                    }
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.metrics_interval_secs !== void 0) {
                  let data3 = data.metrics_interval_secs;
                  const _errs8 = errors;
                  if (!(typeof data3 == "number" && (!(data3 % 1) && !isNaN(data3)) && isFinite(data3)) && data3 !== null) {
                    validate31.errors = [{ instancePath: instancePath + "/metrics_interval_secs", schemaPath: "#/properties/metrics_interval_secs/type", keyword: "type", params: { type: schema35.properties.metrics_interval_secs.type }, message: "must be integer,null" }];
                    return false;
                  }
                  if (errors === _errs8) {
                    if (typeof data3 == "number" && isFinite(data3)) {
                      if (data3 < 1 || isNaN(data3)) {
                        validate31.errors = [{ instancePath: instancePath + "/metrics_interval_secs", schemaPath: "#/properties/metrics_interval_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                        return false;
                      }
                    }
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.probe_concurrency !== void 0) {
                    let data4 = data.probe_concurrency;
                    const _errs10 = errors;
                    if (!(typeof data4 == "number" && (!(data4 % 1) && !isNaN(data4)) && isFinite(data4))) {
                      validate31.errors = [{ instancePath: instancePath + "/probe_concurrency", schemaPath: "#/properties/probe_concurrency/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                      return false;
                    }
                    if (errors === _errs10) {
                      if (typeof data4 == "number" && isFinite(data4)) {
                        if (data4 > 64 || isNaN(data4)) {
                          validate31.errors = [{ instancePath: instancePath + "/probe_concurrency", schemaPath: "#/properties/probe_concurrency/maximum", keyword: "maximum", params: { comparison: "<=", limit: 64 }, message: "must be <= 64" }];
                          return false;
                        } else {
                          if (data4 < 1 || isNaN(data4)) {
                            validate31.errors = [{ instancePath: instancePath + "/probe_concurrency", schemaPath: "#/properties/probe_concurrency/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                            return false;
                          }
                        }
                      }
                    }
                    var valid0 = _errs10 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.log_sources !== void 0) {
                      let data5 = data.log_sources;
                      const _errs12 = errors;
                      if (errors === _errs12) {
                        if (Array.isArray(data5)) {
                          var valid1 = true;
                          const len0 = data5.length;
                          for (let i0 = 0; i0 < len0; i0++) {
                            let data6 = data5[i0];
                            const _errs14 = errors;
                            if (errors === _errs14) {
                              if (data6 && typeof data6 == "object" && !Array.isArray(data6)) {
                                let missing1;
                                if (data6.kind === void 0 && (missing1 = "kind")) {
                                  validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0, schemaPath: "#/properties/log_sources/items/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                                  return false;
                                } else {
                                  if (data6.kind !== void 0) {
                                    let data7 = data6.kind;
                                    const _errs16 = errors;
                                    if (typeof data7 !== "string") {
                                      validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/kind", schemaPath: "#/properties/log_sources/items/properties/kind/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                      return false;
                                    }
                                    if (!(data7 === "journald" || data7 === "file" || data7 === "docker" || data7 === "custom")) {
                                      validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/kind", schemaPath: "#/properties/log_sources/items/properties/kind/enum", keyword: "enum", params: { allowedValues: schema35.properties.log_sources.items.properties.kind.enum }, message: "must be equal to one of the allowed values" }];
                                      return false;
                                    }
                                    var valid2 = _errs16 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data6.path !== void 0) {
                                      const _errs18 = errors;
                                      if (typeof data6.path !== "string") {
                                        validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/path", schemaPath: "#/properties/log_sources/items/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                        return false;
                                      }
                                      var valid2 = _errs18 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                    if (valid2) {
                                      if (data6.filter !== void 0) {
                                        let data9 = data6.filter;
                                        const _errs20 = errors;
                                        if (typeof data9 !== "string" && data9 !== null) {
                                          validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/filter", schemaPath: "#/properties/log_sources/items/properties/filter/type", keyword: "type", params: { type: schema35.properties.log_sources.items.properties.filter.type }, message: "must be string,null" }];
                                          return false;
                                        }
                                        var valid2 = _errs20 === errors;
                                      } else {
                                        var valid2 = true;
                                      }
                                      if (valid2) {
                                        if (data6.labels !== void 0) {
                                          let data10 = data6.labels;
                                          const _errs22 = errors;
                                          if (errors === _errs22) {
                                            if (data10 && typeof data10 == "object" && !Array.isArray(data10)) {
                                              for (const key1 in data10) {
                                                const _errs25 = errors;
                                                if (typeof data10[key1] !== "string") {
                                                  validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/labels/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/properties/log_sources/items/properties/labels/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                  return false;
                                                }
                                                var valid3 = _errs25 === errors;
                                                if (!valid3) {
                                                  break;
                                                }
                                              }
                                            } else {
                                              validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/labels", schemaPath: "#/properties/log_sources/items/properties/labels/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                              return false;
                                            }
                                          }
                                          var valid2 = _errs22 === errors;
                                        } else {
                                          var valid2 = true;
                                        }
                                        if (valid2) {
                                          if (data6.start_at !== void 0) {
                                            let data12 = data6.start_at;
                                            const _errs27 = errors;
                                            if (typeof data12 !== "string") {
                                              validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/start_at", schemaPath: "#/properties/log_sources/items/properties/start_at/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                              return false;
                                            }
                                            if (!(data12 === "beginning" || data12 === "end")) {
                                              validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0 + "/start_at", schemaPath: "#/properties/log_sources/items/properties/start_at/enum", keyword: "enum", params: { allowedValues: schema35.properties.log_sources.items.properties.start_at.enum }, message: "must be equal to one of the allowed values" }];
                                              return false;
                                            }
                                            var valid2 = _errs27 === errors;
                                          } else {
                                            var valid2 = true;
                                          }
                                        }
                                      }
                                    }
                                  }
                                }
                              } else {
                                validate31.errors = [{ instancePath: instancePath + "/log_sources/" + i0, schemaPath: "#/properties/log_sources/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                return false;
                              }
                            }
                            var valid1 = _errs14 === errors;
                            if (!valid1) {
                              break;
                            }
                          }
                        } else {
                          validate31.errors = [{ instancePath: instancePath + "/log_sources", schemaPath: "#/properties/log_sources/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                          return false;
                        }
                      }
                      var valid0 = _errs12 === errors;
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
    } else {
      validate31.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate31.errors = vErrors;
  return errors === 0;
}
var validateAuthFailedData = validate33;
function validate33(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate33.evaluated || (validate33.evaluated = { "props": { "reason": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.reason === void 0 && (missing0 = "reason")) {
        validate33.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        if (data.reason !== void 0) {
          if (typeof data.reason !== "string") {
            validate33.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
            return false;
          }
        }
      }
    } else {
      validate33.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate33.errors = vErrors;
  return errors === 0;
}
var validateTokenRevokedData = validate34;
function validate34(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate34.evaluated || (validate34.evaluated = { "props": { "reason": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.reason !== void 0) {
        if (typeof data.reason !== "string") {
          validate34.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
          return false;
        }
      }
    } else {
      validate34.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate34.errors = vErrors;
  return errors === 0;
}
var validateAgentVersionUnsupportedData = validate35;
function validate35(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate35.evaluated || (validate35.evaluated = { "props": { "required_protocol_version": true, "current": true, "min_agent_version": true, "agent_version": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.required_protocol_version !== void 0) {
        let data0 = data.required_protocol_version;
        const _errs1 = errors;
        if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
          validate35.errors = [{ instancePath: instancePath + "/required_protocol_version", schemaPath: "#/properties/required_protocol_version/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
          return false;
        }
        var valid0 = _errs1 === errors;
      } else {
        var valid0 = true;
      }
      if (valid0) {
        if (data.current !== void 0) {
          let data1 = data.current;
          const _errs3 = errors;
          if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
            validate35.errors = [{ instancePath: instancePath + "/current", schemaPath: "#/properties/current/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
            return false;
          }
          var valid0 = _errs3 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.min_agent_version !== void 0) {
            const _errs5 = errors;
            if (typeof data.min_agent_version !== "string") {
              validate35.errors = [{ instancePath: instancePath + "/min_agent_version", schemaPath: "#/properties/min_agent_version/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            var valid0 = _errs5 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.agent_version !== void 0) {
              const _errs7 = errors;
              if (typeof data.agent_version !== "string") {
                validate35.errors = [{ instancePath: instancePath + "/agent_version", schemaPath: "#/properties/agent_version/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
              var valid0 = _errs7 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate35.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate35.errors = vErrors;
  return errors === 0;
}
var validateUnknownHostData = validate36;
function validate36(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate36.evaluated || (validate36.evaluated = { "props": { "host_id": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.host_id !== void 0) {
        if (typeof data.host_id !== "string") {
          validate36.errors = [{ instancePath: instancePath + "/host_id", schemaPath: "#/properties/host_id/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
          return false;
        }
      }
    } else {
      validate36.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate36.errors = vErrors;
  return errors === 0;
}
var validateTokenRotationRequiredData = validate37;
function validate37(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate37.evaluated || (validate37.evaluated = { "props": { "reason": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.reason !== void 0) {
        if (typeof data.reason !== "string") {
          validate37.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
          return false;
        }
      }
    } else {
      validate37.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate37.errors = vErrors;
  return errors === 0;
}
var validateBufferOverflowData = validate38;
function validate38(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate38.evaluated || (validate38.evaluated = { "props": { "retry_after_ms": true, "reason": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.retry_after_ms !== void 0) {
        let data0 = data.retry_after_ms;
        const _errs1 = errors;
        if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
          validate38.errors = [{ instancePath: instancePath + "/retry_after_ms", schemaPath: "#/properties/retry_after_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
          return false;
        }
        if (errors === _errs1) {
          if (typeof data0 == "number" && isFinite(data0)) {
            if (data0 < 0 || isNaN(data0)) {
              validate38.errors = [{ instancePath: instancePath + "/retry_after_ms", schemaPath: "#/properties/retry_after_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
              return false;
            }
          }
        }
        var valid0 = _errs1 === errors;
      } else {
        var valid0 = true;
      }
      if (valid0) {
        if (data.reason !== void 0) {
          const _errs3 = errors;
          if (typeof data.reason !== "string") {
            validate38.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
            return false;
          }
          var valid0 = _errs3 === errors;
        } else {
          var valid0 = true;
        }
      }
    } else {
      validate38.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate38.errors = vErrors;
  return errors === 0;
}
var validatePayloadTooLargeData = validate39;
function validate39(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate39.evaluated || (validate39.evaluated = { "props": { "max_entries": true, "received": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.max_entries !== void 0) {
        let data0 = data.max_entries;
        const _errs1 = errors;
        if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
          validate39.errors = [{ instancePath: instancePath + "/max_entries", schemaPath: "#/properties/max_entries/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
          return false;
        }
        if (errors === _errs1) {
          if (typeof data0 == "number" && isFinite(data0)) {
            if (data0 < 1 || isNaN(data0)) {
              validate39.errors = [{ instancePath: instancePath + "/max_entries", schemaPath: "#/properties/max_entries/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
              return false;
            }
          }
        }
        var valid0 = _errs1 === errors;
      } else {
        var valid0 = true;
      }
      if (valid0) {
        if (data.received !== void 0) {
          let data1 = data.received;
          const _errs3 = errors;
          if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
            validate39.errors = [{ instancePath: instancePath + "/received", schemaPath: "#/properties/received/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
            return false;
          }
          if (errors === _errs3) {
            if (typeof data1 == "number" && isFinite(data1)) {
              if (data1 < 0 || isNaN(data1)) {
                validate39.errors = [{ instancePath: instancePath + "/received", schemaPath: "#/properties/received/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                return false;
              }
            }
          }
          var valid0 = _errs3 === errors;
        } else {
          var valid0 = true;
        }
      }
    } else {
      validate39.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate39.errors = vErrors;
  return errors === 0;
}
var validateProbeUnavailableData = validate40;
function validate40(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate40.evaluated || (validate40.evaluated = { "props": { "probe": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      if (data.probe !== void 0) {
        if (typeof data.probe !== "string") {
          validate40.errors = [{ instancePath: instancePath + "/probe", schemaPath: "#/properties/probe/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
          return false;
        }
      }
    } else {
      validate40.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate40.errors = vErrors;
  return errors === 0;
}
var validateProbeExecutionFailedData = validate41;
var schema56 = { "title": "ProbeExecutionFailedData", "description": "-32011 ProbeExecutionFailed: data.stderr and data.exit_code are populated.", "type": "object", "required": ["stderr", "exit_code"], "properties": { "stderr": { "type": ["string", "null"] }, "exit_code": { "type": ["integer", "null"] }, "probe": { "type": "string" } } };
function validate41(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate41.evaluated || (validate41.evaluated = { "props": { "stderr": true, "exit_code": true, "probe": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.stderr === void 0 && (missing0 = "stderr") || data.exit_code === void 0 && (missing0 = "exit_code")) {
        validate41.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        if (data.stderr !== void 0) {
          let data0 = data.stderr;
          const _errs1 = errors;
          if (typeof data0 !== "string" && data0 !== null) {
            validate41.errors = [{ instancePath: instancePath + "/stderr", schemaPath: "#/properties/stderr/type", keyword: "type", params: { type: schema56.properties.stderr.type }, message: "must be string,null" }];
            return false;
          }
          var valid0 = _errs1 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.exit_code !== void 0) {
            let data1 = data.exit_code;
            const _errs3 = errors;
            if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && data1 !== null) {
              validate41.errors = [{ instancePath: instancePath + "/exit_code", schemaPath: "#/properties/exit_code/type", keyword: "type", params: { type: schema56.properties.exit_code.type }, message: "must be integer,null" }];
              return false;
            }
            var valid0 = _errs3 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.probe !== void 0) {
              const _errs5 = errors;
              if (typeof data.probe !== "string") {
                validate41.errors = [{ instancePath: instancePath + "/probe", schemaPath: "#/properties/probe/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
              var valid0 = _errs5 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate41.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate41.errors = vErrors;
  return errors === 0;
}
var validateProbeTimeoutData = validate42;
function validate42(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate42.evaluated || (validate42.evaluated = { "props": { "probe": true, "timeout_ms": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.probe === void 0 && (missing0 = "probe") || data.timeout_ms === void 0 && (missing0 = "timeout_ms")) {
        validate42.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        if (data.probe !== void 0) {
          const _errs1 = errors;
          if (typeof data.probe !== "string") {
            validate42.errors = [{ instancePath: instancePath + "/probe", schemaPath: "#/properties/probe/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
            return false;
          }
          var valid0 = _errs1 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.timeout_ms !== void 0) {
            let data1 = data.timeout_ms;
            const _errs3 = errors;
            if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
              validate42.errors = [{ instancePath: instancePath + "/timeout_ms", schemaPath: "#/properties/timeout_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs3) {
              if (typeof data1 == "number" && isFinite(data1)) {
                if (data1 < 1 || isNaN(data1)) {
                  validate42.errors = [{ instancePath: instancePath + "/timeout_ms", schemaPath: "#/properties/timeout_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                  return false;
                }
              }
            }
            var valid0 = _errs3 === errors;
          } else {
            var valid0 = true;
          }
        }
      }
    } else {
      validate42.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate42.errors = vErrors;
  return errors === 0;
}
var validateRetryAfterData = validate43;
function validate43(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate43.evaluated || (validate43.evaluated = { "props": { "retry_after_ms": true, "resend_from_seq": true, "reason": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.retry_after_ms === void 0 && (missing0 = "retry_after_ms")) {
        validate43.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        if (data.retry_after_ms !== void 0) {
          let data0 = data.retry_after_ms;
          const _errs1 = errors;
          if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
            validate43.errors = [{ instancePath: instancePath + "/retry_after_ms", schemaPath: "#/properties/retry_after_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
            return false;
          }
          if (errors === _errs1) {
            if (typeof data0 == "number" && isFinite(data0)) {
              if (data0 < 0 || isNaN(data0)) {
                validate43.errors = [{ instancePath: instancePath + "/retry_after_ms", schemaPath: "#/properties/retry_after_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                return false;
              }
            }
          }
          var valid0 = _errs1 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.resend_from_seq !== void 0) {
            let data1 = data.resend_from_seq;
            const _errs3 = errors;
            if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
              validate43.errors = [{ instancePath: instancePath + "/resend_from_seq", schemaPath: "#/properties/resend_from_seq/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs3) {
              if (typeof data1 == "number" && isFinite(data1)) {
                if (data1 < 0 || isNaN(data1)) {
                  validate43.errors = [{ instancePath: instancePath + "/resend_from_seq", schemaPath: "#/properties/resend_from_seq/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                  return false;
                }
              }
            }
            var valid0 = _errs3 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.reason !== void 0) {
              const _errs5 = errors;
              if (typeof data.reason !== "string") {
                validate43.errors = [{ instancePath: instancePath + "/reason", schemaPath: "#/properties/reason/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
              var valid0 = _errs5 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate43.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate43.errors = vErrors;
  return errors === 0;
}
var validateInvalidParamsData = validate44;
function validate44(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate44.evaluated || (validate44.evaluated = { "props": { "method": true, "errors": true }, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.errors === void 0 && (missing0 = "errors")) {
        validate44.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        if (data.method !== void 0) {
          const _errs1 = errors;
          if (typeof data.method !== "string") {
            validate44.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
            return false;
          }
          var valid0 = _errs1 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.errors !== void 0) {
            let data1 = data.errors;
            const _errs3 = errors;
            if (errors === _errs3) {
              if (Array.isArray(data1)) {
                var valid1 = true;
                const len0 = data1.length;
                for (let i0 = 0; i0 < len0; i0++) {
                  let data2 = data1[i0];
                  const _errs5 = errors;
                  if (errors === _errs5) {
                    if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                      let missing1;
                      if (data2.path === void 0 && (missing1 = "path") || data2.message === void 0 && (missing1 = "message")) {
                        validate44.errors = [{ instancePath: instancePath + "/errors/" + i0, schemaPath: "#/properties/errors/items/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                        return false;
                      } else {
                        if (data2.path !== void 0) {
                          const _errs7 = errors;
                          if (typeof data2.path !== "string") {
                            validate44.errors = [{ instancePath: instancePath + "/errors/" + i0 + "/path", schemaPath: "#/properties/errors/items/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                            return false;
                          }
                          var valid2 = _errs7 === errors;
                        } else {
                          var valid2 = true;
                        }
                        if (valid2) {
                          if (data2.message !== void 0) {
                            const _errs9 = errors;
                            if (typeof data2.message !== "string") {
                              validate44.errors = [{ instancePath: instancePath + "/errors/" + i0 + "/message", schemaPath: "#/properties/errors/items/properties/message/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                              return false;
                            }
                            var valid2 = _errs9 === errors;
                          } else {
                            var valid2 = true;
                          }
                          if (valid2) {
                            if (data2.keyword !== void 0) {
                              const _errs11 = errors;
                              if (typeof data2.keyword !== "string") {
                                validate44.errors = [{ instancePath: instancePath + "/errors/" + i0 + "/keyword", schemaPath: "#/properties/errors/items/properties/keyword/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                return false;
                              }
                              var valid2 = _errs11 === errors;
                            } else {
                              var valid2 = true;
                            }
                          }
                        }
                      }
                    } else {
                      validate44.errors = [{ instancePath: instancePath + "/errors/" + i0, schemaPath: "#/properties/errors/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                      return false;
                    }
                  }
                  var valid1 = _errs5 === errors;
                  if (!valid1) {
                    break;
                  }
                }
              } else {
                validate44.errors = [{ instancePath: instancePath + "/errors", schemaPath: "#/properties/errors/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                return false;
              }
            }
            var valid0 = _errs3 === errors;
          } else {
            var valid0 = true;
          }
        }
      }
    } else {
      validate44.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate44.errors = vErrors;
  return errors === 0;
}
var validateJsonRpcMessage = validate45;
var schema63 = { "title": "JsonRpcNotification", "description": "A notification: no id, never answered.", "type": "object", "required": ["jsonrpc", "method"], "additionalProperties": false, "properties": { "jsonrpc": { "const": "2.0" }, "method": { "type": "string", "minLength": 1 }, "params": { "type": ["object", "array"] } } };
var schema61 = { "title": "JsonRpcRequest", "description": "A request: has an id and expects exactly one response with the same id.", "type": "object", "required": ["jsonrpc", "id", "method"], "additionalProperties": false, "properties": { "jsonrpc": { "const": "2.0" }, "id": { "$ref": "#/$defs/JsonRpcId" }, "method": { "type": "string", "minLength": 1 }, "params": { "type": ["object", "array"] } } };
var schema62 = { "title": "JsonRpcId", "description": "Request identifier. This contract uses integers; strings are accepted as JSON-RPC 2.0 allows. An integer id is within ±(2^53 − 1), the integers every JSON parser keeps exactly (RFC 8259 on numbers; RFC 7493, I-JSON): a larger one may be read as another number, so that the response would carry an id the sender never used; such a request is answered -32600 with id null.", "type": ["integer", "string"], "minimum": -9007199254740991, "maximum": 9007199254740991 };
function validate46(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate46.evaluated || (validate46.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.id === void 0 && (missing0 = "id") || data.method === void 0 && (missing0 = "method")) {
        validate46.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "id" || key0 === "method" || key0 === "params")) {
            validate46.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate46.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              let data1 = data.id;
              const _errs3 = errors;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && typeof data1 !== "string") {
                validate46.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 9007199254740991 || isNaN(data1)) {
                    validate46.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" }];
                    return false;
                  } else {
                    if (data1 < -9007199254740991 || isNaN(data1)) {
                      validate46.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.method !== void 0) {
                let data2 = data.method;
                const _errs6 = errors;
                if (errors === _errs6) {
                  if (typeof data2 === "string") {
                    if (func1(data2) < 1) {
                      validate46.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                      return false;
                    }
                  } else {
                    validate46.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.params !== void 0) {
                  let data3 = data.params;
                  const _errs8 = errors;
                  if (!data3 || typeof data3 != "object") {
                    validate46.errors = [{ instancePath: instancePath + "/params", schemaPath: "#/properties/params/type", keyword: "type", params: { type: schema61.properties.params.type }, message: "must be object,array" }];
                    return false;
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
              }
            }
          }
        }
      }
    } else {
      validate46.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate46.errors = vErrors;
  return errors === 0;
}
function validate48(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate48.evaluated || (validate48.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.id === void 0 && (missing0 = "id") || data.result === void 0 && (missing0 = "result")) {
        validate48.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "id" || key0 === "result")) {
            validate48.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate48.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              let data1 = data.id;
              const _errs3 = errors;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && typeof data1 !== "string") {
                validate48.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 9007199254740991 || isNaN(data1)) {
                    validate48.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" }];
                    return false;
                  } else {
                    if (data1 < -9007199254740991 || isNaN(data1)) {
                      validate48.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate48.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate48.errors = vErrors;
  return errors === 0;
}
function validate50(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate50.evaluated || (validate50.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.id === void 0 && (missing0 = "id") || data.error === void 0 && (missing0 = "error")) {
        validate50.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "id" || key0 === "error")) {
            validate50.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate50.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              let data1 = data.id;
              const _errs3 = errors;
              const _errs4 = errors;
              let valid1 = false;
              let passing0 = null;
              const _errs5 = errors;
              const _errs6 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && typeof data1 !== "string") {
                const err0 = { instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" };
                if (vErrors === null) {
                  vErrors = [err0];
                } else {
                  vErrors.push(err0);
                }
                errors++;
              }
              if (errors === _errs6) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 9007199254740991 || isNaN(data1)) {
                    const err1 = { instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" };
                    if (vErrors === null) {
                      vErrors = [err1];
                    } else {
                      vErrors.push(err1);
                    }
                    errors++;
                  } else {
                    if (data1 < -9007199254740991 || isNaN(data1)) {
                      const err2 = { instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" };
                      if (vErrors === null) {
                        vErrors = [err2];
                      } else {
                        vErrors.push(err2);
                      }
                      errors++;
                    }
                  }
                }
              }
              var _valid0 = _errs5 === errors;
              if (_valid0) {
                valid1 = true;
                passing0 = 0;
              }
              const _errs8 = errors;
              if (data1 !== null) {
                const err3 = { instancePath: instancePath + "/id", schemaPath: "#/properties/id/oneOf/1/type", keyword: "type", params: { type: "null" }, message: "must be null" };
                if (vErrors === null) {
                  vErrors = [err3];
                } else {
                  vErrors.push(err3);
                }
                errors++;
              }
              var _valid0 = _errs8 === errors;
              if (_valid0 && valid1) {
                valid1 = false;
                passing0 = [passing0, 1];
              } else {
                if (_valid0) {
                  valid1 = true;
                  passing0 = 1;
                }
              }
              if (!valid1) {
                const err4 = { instancePath: instancePath + "/id", schemaPath: "#/properties/id/oneOf", keyword: "oneOf", params: { passingSchemas: passing0 }, message: "must match exactly one schema in oneOf" };
                if (vErrors === null) {
                  vErrors = [err4];
                } else {
                  vErrors.push(err4);
                }
                errors++;
                validate50.errors = vErrors;
                return false;
              } else {
                errors = _errs4;
                if (vErrors !== null) {
                  if (_errs4) {
                    vErrors.length = _errs4;
                  } else {
                    vErrors = null;
                  }
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.error !== void 0) {
                let data2 = data.error;
                const _errs10 = errors;
                const _errs11 = errors;
                if (errors === _errs11) {
                  if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                    let missing1;
                    if (data2.code === void 0 && (missing1 = "code") || data2.message === void 0 && (missing1 = "message")) {
                      validate50.errors = [{ instancePath: instancePath + "/error", schemaPath: "#/$defs/JsonRpcErrorObject/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                      return false;
                    } else {
                      const _errs13 = errors;
                      for (const key1 in data2) {
                        if (!(key1 === "code" || key1 === "message" || key1 === "data")) {
                          validate50.errors = [{ instancePath: instancePath + "/error", schemaPath: "#/$defs/JsonRpcErrorObject/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                          return false;
                          break;
                        }
                      }
                      if (_errs13 === errors) {
                        if (data2.code !== void 0) {
                          let data3 = data2.code;
                          const _errs14 = errors;
                          if (!(typeof data3 == "number" && (!(data3 % 1) && !isNaN(data3)) && isFinite(data3))) {
                            validate50.errors = [{ instancePath: instancePath + "/error/code", schemaPath: "#/$defs/JsonRpcErrorObject/properties/code/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                            return false;
                          }
                          var valid4 = _errs14 === errors;
                        } else {
                          var valid4 = true;
                        }
                        if (valid4) {
                          if (data2.message !== void 0) {
                            const _errs16 = errors;
                            if (typeof data2.message !== "string") {
                              validate50.errors = [{ instancePath: instancePath + "/error/message", schemaPath: "#/$defs/JsonRpcErrorObject/properties/message/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                              return false;
                            }
                            var valid4 = _errs16 === errors;
                          } else {
                            var valid4 = true;
                          }
                        }
                      }
                    }
                  } else {
                    validate50.errors = [{ instancePath: instancePath + "/error", schemaPath: "#/$defs/JsonRpcErrorObject/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                    return false;
                  }
                }
                var valid0 = _errs10 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate50.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate50.errors = vErrors;
  return errors === 0;
}
function validate45(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate45.evaluated || (validate45.evaluated = { "dynamicProps": true, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  const _errs0 = errors;
  let valid0 = false;
  let passing0 = null;
  const _errs1 = errors;
  if (!validate46(data, { instancePath, parentData, parentDataProperty, rootData, dynamicAnchors })) {
    vErrors = vErrors === null ? validate46.errors : vErrors.concat(validate46.errors);
    errors = vErrors.length;
  }
  var _valid0 = _errs1 === errors;
  if (_valid0) {
    valid0 = true;
    passing0 = 0;
    var props0 = true;
  }
  const _errs2 = errors;
  const _errs3 = errors;
  if (errors === _errs3) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.method === void 0 && (missing0 = "method")) {
        const err0 = { instancePath, schemaPath: "#/$defs/JsonRpcNotification/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" };
        if (vErrors === null) {
          vErrors = [err0];
        } else {
          vErrors.push(err0);
        }
        errors++;
      } else {
        const _errs5 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "method" || key0 === "params")) {
            const err1 = { instancePath, schemaPath: "#/$defs/JsonRpcNotification/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" };
            if (vErrors === null) {
              vErrors = [err1];
            } else {
              vErrors.push(err1);
            }
            errors++;
            break;
          }
        }
        if (_errs5 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs6 = errors;
            if ("2.0" !== data.jsonrpc) {
              const err2 = { instancePath: instancePath + "/jsonrpc", schemaPath: "#/$defs/JsonRpcNotification/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" };
              if (vErrors === null) {
                vErrors = [err2];
              } else {
                vErrors.push(err2);
              }
              errors++;
            }
            var valid2 = _errs6 === errors;
          } else {
            var valid2 = true;
          }
          if (valid2) {
            if (data.method !== void 0) {
              let data1 = data.method;
              const _errs7 = errors;
              if (errors === _errs7) {
                if (typeof data1 === "string") {
                  if (func1(data1) < 1) {
                    const err3 = { instancePath: instancePath + "/method", schemaPath: "#/$defs/JsonRpcNotification/properties/method/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" };
                    if (vErrors === null) {
                      vErrors = [err3];
                    } else {
                      vErrors.push(err3);
                    }
                    errors++;
                  }
                } else {
                  const err4 = { instancePath: instancePath + "/method", schemaPath: "#/$defs/JsonRpcNotification/properties/method/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                  if (vErrors === null) {
                    vErrors = [err4];
                  } else {
                    vErrors.push(err4);
                  }
                  errors++;
                }
              }
              var valid2 = _errs7 === errors;
            } else {
              var valid2 = true;
            }
            if (valid2) {
              if (data.params !== void 0) {
                let data2 = data.params;
                const _errs9 = errors;
                if (!data2 || typeof data2 != "object") {
                  const err5 = { instancePath: instancePath + "/params", schemaPath: "#/$defs/JsonRpcNotification/properties/params/type", keyword: "type", params: { type: schema63.properties.params.type }, message: "must be object,array" };
                  if (vErrors === null) {
                    vErrors = [err5];
                  } else {
                    vErrors.push(err5);
                  }
                  errors++;
                }
                var valid2 = _errs9 === errors;
              } else {
                var valid2 = true;
              }
            }
          }
        }
      }
    } else {
      const err6 = { instancePath, schemaPath: "#/$defs/JsonRpcNotification/type", keyword: "type", params: { type: "object" }, message: "must be object" };
      if (vErrors === null) {
        vErrors = [err6];
      } else {
        vErrors.push(err6);
      }
      errors++;
    }
  }
  var _valid0 = _errs2 === errors;
  if (_valid0 && valid0) {
    valid0 = false;
    passing0 = [passing0, 1];
  } else {
    if (_valid0) {
      valid0 = true;
      passing0 = 1;
      if (props0 !== true) {
        props0 = true;
      }
    }
    const _errs11 = errors;
    if (!validate48(data, { instancePath, parentData, parentDataProperty, rootData, dynamicAnchors })) {
      vErrors = vErrors === null ? validate48.errors : vErrors.concat(validate48.errors);
      errors = vErrors.length;
    }
    var _valid0 = _errs11 === errors;
    if (_valid0 && valid0) {
      valid0 = false;
      passing0 = [passing0, 2];
    } else {
      if (_valid0) {
        valid0 = true;
        passing0 = 2;
        if (props0 !== true) {
          props0 = true;
        }
      }
      const _errs12 = errors;
      if (!validate50(data, { instancePath, parentData, parentDataProperty, rootData, dynamicAnchors })) {
        vErrors = vErrors === null ? validate50.errors : vErrors.concat(validate50.errors);
        errors = vErrors.length;
      }
      var _valid0 = _errs12 === errors;
      if (_valid0 && valid0) {
        valid0 = false;
        passing0 = [passing0, 3];
      } else {
        if (_valid0) {
          valid0 = true;
          passing0 = 3;
          if (props0 !== true) {
            props0 = true;
          }
        }
      }
    }
  }
  if (!valid0) {
    const err7 = { instancePath, schemaPath: "#/oneOf", keyword: "oneOf", params: { passingSchemas: passing0 }, message: "must match exactly one schema in oneOf" };
    if (vErrors === null) {
      vErrors = [err7];
    } else {
      vErrors.push(err7);
    }
    errors++;
    validate45.errors = vErrors;
    return false;
  } else {
    errors = _errs0;
    if (vErrors !== null) {
      if (_errs0) {
        vErrors.length = _errs0;
      } else {
        vErrors = null;
      }
    }
  }
  validate45.errors = vErrors;
  evaluated0.props = props0;
  return errors === 0;
}
var validateJsonRpcId = validate52;
function validate52(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate52.evaluated || (validate52.evaluated = { "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (!(typeof data == "number" && (!(data % 1) && !isNaN(data)) && isFinite(data)) && typeof data !== "string") {
    validate52.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" }];
    return false;
  }
  if (errors === 0) {
    if (typeof data == "number" && isFinite(data)) {
      if (data > 9007199254740991 || isNaN(data)) {
        validate52.errors = [{ instancePath, schemaPath: "#/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" }];
        return false;
      } else {
        if (data < -9007199254740991 || isNaN(data)) {
          validate52.errors = [{ instancePath, schemaPath: "#/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" }];
          return false;
        }
      }
    }
  }
  validate52.errors = vErrors;
  return errors === 0;
}
var validateJsonRpcRequest = validate53;
function validate53(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate53.evaluated || (validate53.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.id === void 0 && (missing0 = "id") || data.method === void 0 && (missing0 = "method")) {
        validate53.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "id" || key0 === "method" || key0 === "params")) {
            validate53.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate53.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              let data1 = data.id;
              const _errs3 = errors;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && typeof data1 !== "string") {
                validate53.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 9007199254740991 || isNaN(data1)) {
                    validate53.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" }];
                    return false;
                  } else {
                    if (data1 < -9007199254740991 || isNaN(data1)) {
                      validate53.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.method !== void 0) {
                let data2 = data.method;
                const _errs6 = errors;
                if (errors === _errs6) {
                  if (typeof data2 === "string") {
                    if (func1(data2) < 1) {
                      validate53.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                      return false;
                    }
                  } else {
                    validate53.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.params !== void 0) {
                  let data3 = data.params;
                  const _errs8 = errors;
                  if (!data3 || typeof data3 != "object") {
                    validate53.errors = [{ instancePath: instancePath + "/params", schemaPath: "#/properties/params/type", keyword: "type", params: { type: schema61.properties.params.type }, message: "must be object,array" }];
                    return false;
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
              }
            }
          }
        }
      }
    } else {
      validate53.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate53.errors = vErrors;
  return errors === 0;
}
var validateJsonRpcNotification = validate54;
function validate54(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate54.evaluated || (validate54.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.method === void 0 && (missing0 = "method")) {
        validate54.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "method" || key0 === "params")) {
            validate54.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate54.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.method !== void 0) {
              let data1 = data.method;
              const _errs3 = errors;
              if (errors === _errs3) {
                if (typeof data1 === "string") {
                  if (func1(data1) < 1) {
                    validate54.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  }
                } else {
                  validate54.errors = [{ instancePath: instancePath + "/method", schemaPath: "#/properties/method/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.params !== void 0) {
                let data2 = data.params;
                const _errs5 = errors;
                if (!data2 || typeof data2 != "object") {
                  validate54.errors = [{ instancePath: instancePath + "/params", schemaPath: "#/properties/params/type", keyword: "type", params: { type: schema63.properties.params.type }, message: "must be object,array" }];
                  return false;
                }
                var valid0 = _errs5 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate54.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate54.errors = vErrors;
  return errors === 0;
}
var validateJsonRpcSuccessResponse = validate55;
function validate55(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate55.evaluated || (validate55.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.id === void 0 && (missing0 = "id") || data.result === void 0 && (missing0 = "result")) {
        validate55.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "id" || key0 === "result")) {
            validate55.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate55.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              let data1 = data.id;
              const _errs3 = errors;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && typeof data1 !== "string") {
                validate55.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 9007199254740991 || isNaN(data1)) {
                    validate55.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" }];
                    return false;
                  } else {
                    if (data1 < -9007199254740991 || isNaN(data1)) {
                      validate55.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate55.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate55.errors = vErrors;
  return errors === 0;
}
var validateJsonRpcErrorObject = validate56;
function validate56(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate56.evaluated || (validate56.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.code === void 0 && (missing0 = "code") || data.message === void 0 && (missing0 = "message")) {
        validate56.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "code" || key0 === "message" || key0 === "data")) {
            validate56.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.code !== void 0) {
            let data0 = data.code;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate56.errors = [{ instancePath: instancePath + "/code", schemaPath: "#/properties/code/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.message !== void 0) {
              const _errs4 = errors;
              if (typeof data.message !== "string") {
                validate56.errors = [{ instancePath: instancePath + "/message", schemaPath: "#/properties/message/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate56.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate56.errors = vErrors;
  return errors === 0;
}
var validateJsonRpcErrorResponse = validate57;
function validate57(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate57.evaluated || (validate57.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.jsonrpc === void 0 && (missing0 = "jsonrpc") || data.id === void 0 && (missing0 = "id") || data.error === void 0 && (missing0 = "error")) {
        validate57.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "jsonrpc" || key0 === "id" || key0 === "error")) {
            validate57.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.jsonrpc !== void 0) {
            const _errs2 = errors;
            if ("2.0" !== data.jsonrpc) {
              validate57.errors = [{ instancePath: instancePath + "/jsonrpc", schemaPath: "#/properties/jsonrpc/const", keyword: "const", params: { allowedValue: "2.0" }, message: "must be equal to constant" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              let data1 = data.id;
              const _errs3 = errors;
              const _errs4 = errors;
              let valid1 = false;
              let passing0 = null;
              const _errs5 = errors;
              const _errs6 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1)) && typeof data1 !== "string") {
                const err0 = { instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/type", keyword: "type", params: { type: schema62.type }, message: "must be integer,string" };
                if (vErrors === null) {
                  vErrors = [err0];
                } else {
                  vErrors.push(err0);
                }
                errors++;
              }
              if (errors === _errs6) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 9007199254740991 || isNaN(data1)) {
                    const err1 = { instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/maximum", keyword: "maximum", params: { comparison: "<=", limit: 9007199254740991 }, message: "must be <= 9007199254740991" };
                    if (vErrors === null) {
                      vErrors = [err1];
                    } else {
                      vErrors.push(err1);
                    }
                    errors++;
                  } else {
                    if (data1 < -9007199254740991 || isNaN(data1)) {
                      const err2 = { instancePath: instancePath + "/id", schemaPath: "#/$defs/JsonRpcId/minimum", keyword: "minimum", params: { comparison: ">=", limit: -9007199254740991 }, message: "must be >= -9007199254740991" };
                      if (vErrors === null) {
                        vErrors = [err2];
                      } else {
                        vErrors.push(err2);
                      }
                      errors++;
                    }
                  }
                }
              }
              var _valid0 = _errs5 === errors;
              if (_valid0) {
                valid1 = true;
                passing0 = 0;
              }
              const _errs8 = errors;
              if (data1 !== null) {
                const err3 = { instancePath: instancePath + "/id", schemaPath: "#/properties/id/oneOf/1/type", keyword: "type", params: { type: "null" }, message: "must be null" };
                if (vErrors === null) {
                  vErrors = [err3];
                } else {
                  vErrors.push(err3);
                }
                errors++;
              }
              var _valid0 = _errs8 === errors;
              if (_valid0 && valid1) {
                valid1 = false;
                passing0 = [passing0, 1];
              } else {
                if (_valid0) {
                  valid1 = true;
                  passing0 = 1;
                }
              }
              if (!valid1) {
                const err4 = { instancePath: instancePath + "/id", schemaPath: "#/properties/id/oneOf", keyword: "oneOf", params: { passingSchemas: passing0 }, message: "must match exactly one schema in oneOf" };
                if (vErrors === null) {
                  vErrors = [err4];
                } else {
                  vErrors.push(err4);
                }
                errors++;
                validate57.errors = vErrors;
                return false;
              } else {
                errors = _errs4;
                if (vErrors !== null) {
                  if (_errs4) {
                    vErrors.length = _errs4;
                  } else {
                    vErrors = null;
                  }
                }
              }
              var valid0 = _errs3 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.error !== void 0) {
                let data2 = data.error;
                const _errs10 = errors;
                const _errs11 = errors;
                if (errors === _errs11) {
                  if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                    let missing1;
                    if (data2.code === void 0 && (missing1 = "code") || data2.message === void 0 && (missing1 = "message")) {
                      validate57.errors = [{ instancePath: instancePath + "/error", schemaPath: "#/$defs/JsonRpcErrorObject/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                      return false;
                    } else {
                      const _errs13 = errors;
                      for (const key1 in data2) {
                        if (!(key1 === "code" || key1 === "message" || key1 === "data")) {
                          validate57.errors = [{ instancePath: instancePath + "/error", schemaPath: "#/$defs/JsonRpcErrorObject/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                          return false;
                          break;
                        }
                      }
                      if (_errs13 === errors) {
                        if (data2.code !== void 0) {
                          let data3 = data2.code;
                          const _errs14 = errors;
                          if (!(typeof data3 == "number" && (!(data3 % 1) && !isNaN(data3)) && isFinite(data3))) {
                            validate57.errors = [{ instancePath: instancePath + "/error/code", schemaPath: "#/$defs/JsonRpcErrorObject/properties/code/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                            return false;
                          }
                          var valid4 = _errs14 === errors;
                        } else {
                          var valid4 = true;
                        }
                        if (valid4) {
                          if (data2.message !== void 0) {
                            const _errs16 = errors;
                            if (typeof data2.message !== "string") {
                              validate57.errors = [{ instancePath: instancePath + "/error/message", schemaPath: "#/$defs/JsonRpcErrorObject/properties/message/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                              return false;
                            }
                            var valid4 = _errs16 === errors;
                          } else {
                            var valid4 = true;
                          }
                        }
                      }
                    }
                  } else {
                    validate57.errors = [{ instancePath: instancePath + "/error", schemaPath: "#/$defs/JsonRpcErrorObject/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                    return false;
                  }
                }
                var valid0 = _errs10 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate57.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate57.errors = vErrors;
  return errors === 0;
}
var validateLogsPushParamsAjv = validate58;
function validate58(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate58.evaluated || (validate58.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.seq_start === void 0 && (missing0 = "seq_start") || data.entries === void 0 && (missing0 = "entries")) {
        validate58.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "seq_start" || key0 === "entries")) {
            validate58.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.seq_start !== void 0) {
            let data0 = data.seq_start;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate58.errors = [{ instancePath: instancePath + "/seq_start", schemaPath: "#/properties/seq_start/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 < 0 || isNaN(data0)) {
                  validate58.errors = [{ instancePath: instancePath + "/seq_start", schemaPath: "#/properties/seq_start/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                  return false;
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.entries !== void 0) {
              let data1 = data.entries;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (Array.isArray(data1)) {
                  if (data1.length > 1e3) {
                    validate58.errors = [{ instancePath: instancePath + "/entries", schemaPath: "#/properties/entries/maxItems", keyword: "maxItems", params: { limit: 1e3 }, message: "must NOT have more than 1000 items" }];
                    return false;
                  } else {
                    if (data1.length < 1) {
                      validate58.errors = [{ instancePath: instancePath + "/entries", schemaPath: "#/properties/entries/minItems", keyword: "minItems", params: { limit: 1 }, message: "must NOT have fewer than 1 items" }];
                      return false;
                    } else {
                      var valid1 = true;
                      const len0 = data1.length;
                      for (let i0 = 0; i0 < len0; i0++) {
                        const _errs6 = errors;
                        if (!validate28(data1[i0], { instancePath: instancePath + "/entries/" + i0, parentData: data1, parentDataProperty: i0, rootData, dynamicAnchors })) {
                          vErrors = vErrors === null ? validate28.errors : vErrors.concat(validate28.errors);
                          errors = vErrors.length;
                        }
                        var valid1 = _errs6 === errors;
                        if (!valid1) {
                          break;
                        }
                      }
                    }
                  }
                } else {
                  validate58.errors = [{ instancePath: instancePath + "/entries", schemaPath: "#/properties/entries/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                  return false;
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate58.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate58.errors = vErrors;
  return errors === 0;
}
var validateLogsPushResult = validate60;
function validate60(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate60.evaluated || (validate60.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.up_to_seq === void 0 && (missing0 = "up_to_seq")) {
        validate60.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "up_to_seq" || key0 === "received_at")) {
            validate60.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.up_to_seq !== void 0) {
            let data0 = data.up_to_seq;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate60.errors = [{ instancePath: instancePath + "/up_to_seq", schemaPath: "#/properties/up_to_seq/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 < 0 || isNaN(data0)) {
                  validate60.errors = [{ instancePath: instancePath + "/up_to_seq", schemaPath: "#/properties/up_to_seq/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                  return false;
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.received_at !== void 0) {
              let data1 = data.received_at;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (errors === _errs4) {
                  if (typeof data1 === "string") {
                    if (!formats0.validate(data1)) {
                      validate60.errors = [{ instancePath: instancePath + "/received_at", schemaPath: "#/properties/received_at/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                      return false;
                    }
                  } else {
                    validate60.errors = [{ instancePath: instancePath + "/received_at", schemaPath: "#/properties/received_at/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate60.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate60.errors = vErrors;
  return errors === 0;
}
var validateMetricsPushParams = validate61;
function validate61(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate61.evaluated || (validate61.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.ts === void 0 && (missing0 = "ts") || data.samples === void 0 && (missing0 = "samples")) {
        validate61.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "ts" || key0 === "samples")) {
            validate61.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.ts !== void 0) {
            let data0 = data.ts;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (errors === _errs2) {
                if (typeof data0 === "string") {
                  if (!formats0.validate(data0)) {
                    validate61.errors = [{ instancePath: instancePath + "/ts", schemaPath: "#/properties/ts/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                    return false;
                  }
                } else {
                  validate61.errors = [{ instancePath: instancePath + "/ts", schemaPath: "#/properties/ts/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.samples !== void 0) {
              let data1 = data.samples;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (Array.isArray(data1)) {
                  if (data1.length > 512) {
                    validate61.errors = [{ instancePath: instancePath + "/samples", schemaPath: "#/properties/samples/maxItems", keyword: "maxItems", params: { limit: 512 }, message: "must NOT have more than 512 items" }];
                    return false;
                  } else {
                    if (data1.length < 1) {
                      validate61.errors = [{ instancePath: instancePath + "/samples", schemaPath: "#/properties/samples/minItems", keyword: "minItems", params: { limit: 1 }, message: "must NOT have fewer than 1 items" }];
                      return false;
                    } else {
                      var valid1 = true;
                      const len0 = data1.length;
                      for (let i0 = 0; i0 < len0; i0++) {
                        let data2 = data1[i0];
                        const _errs6 = errors;
                        const _errs7 = errors;
                        if (errors === _errs7) {
                          if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                            let missing1;
                            if (data2.name === void 0 && (missing1 = "name") || data2.value === void 0 && (missing1 = "value")) {
                              validate61.errors = [{ instancePath: instancePath + "/samples/" + i0, schemaPath: "defs.json#/$defs/MetricSample/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                              return false;
                            } else {
                              const _errs9 = errors;
                              for (const key1 in data2) {
                                if (!(key1 === "name" || key1 === "value" || key1 === "labels")) {
                                  validate61.errors = [{ instancePath: instancePath + "/samples/" + i0, schemaPath: "defs.json#/$defs/MetricSample/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                                  return false;
                                  break;
                                }
                              }
                              if (_errs9 === errors) {
                                if (data2.name !== void 0) {
                                  let data3 = data2.name;
                                  const _errs10 = errors;
                                  if (errors === _errs10) {
                                    if (typeof data3 === "string") {
                                      if (func1(data3) > 128) {
                                        validate61.errors = [{ instancePath: instancePath + "/samples/" + i0 + "/name", schemaPath: "defs.json#/$defs/MetricSample/properties/name/maxLength", keyword: "maxLength", params: { limit: 128 }, message: "must NOT have more than 128 characters" }];
                                        return false;
                                      } else {
                                        if (func1(data3) < 1) {
                                          validate61.errors = [{ instancePath: instancePath + "/samples/" + i0 + "/name", schemaPath: "defs.json#/$defs/MetricSample/properties/name/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                                          return false;
                                        }
                                      }
                                    } else {
                                      validate61.errors = [{ instancePath: instancePath + "/samples/" + i0 + "/name", schemaPath: "defs.json#/$defs/MetricSample/properties/name/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                      return false;
                                    }
                                  }
                                  var valid3 = _errs10 === errors;
                                } else {
                                  var valid3 = true;
                                }
                                if (valid3) {
                                  if (data2.value !== void 0) {
                                    let data4 = data2.value;
                                    const _errs12 = errors;
                                    if (!(typeof data4 == "number" && isFinite(data4))) {
                                      validate61.errors = [{ instancePath: instancePath + "/samples/" + i0 + "/value", schemaPath: "defs.json#/$defs/MetricSample/properties/value/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                                      return false;
                                    }
                                    var valid3 = _errs12 === errors;
                                  } else {
                                    var valid3 = true;
                                  }
                                  if (valid3) {
                                    if (data2.labels !== void 0) {
                                      let data5 = data2.labels;
                                      const _errs14 = errors;
                                      if (errors === _errs14) {
                                        if (data5 && typeof data5 == "object" && !Array.isArray(data5)) {
                                          for (const key2 in data5) {
                                            const _errs17 = errors;
                                            if (typeof data5[key2] !== "string") {
                                              validate61.errors = [{ instancePath: instancePath + "/samples/" + i0 + "/labels/" + key2.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "defs.json#/$defs/MetricSample/properties/labels/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                              return false;
                                            }
                                            var valid4 = _errs17 === errors;
                                            if (!valid4) {
                                              break;
                                            }
                                          }
                                        } else {
                                          validate61.errors = [{ instancePath: instancePath + "/samples/" + i0 + "/labels", schemaPath: "defs.json#/$defs/MetricSample/properties/labels/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                          return false;
                                        }
                                      }
                                      var valid3 = _errs14 === errors;
                                    } else {
                                      var valid3 = true;
                                    }
                                  }
                                }
                              }
                            }
                          } else {
                            validate61.errors = [{ instancePath: instancePath + "/samples/" + i0, schemaPath: "defs.json#/$defs/MetricSample/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                            return false;
                          }
                        }
                        var valid1 = _errs6 === errors;
                        if (!valid1) {
                          break;
                        }
                      }
                    }
                  }
                } else {
                  validate61.errors = [{ instancePath: instancePath + "/samples", schemaPath: "#/properties/samples/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                  return false;
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate61.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate61.errors = vErrors;
  return errors === 0;
}
var validateMetricsPushResult = validate62;
function validate62(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate62.evaluated || (validate62.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.accepted === void 0 && (missing0 = "accepted")) {
        validate62.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "accepted" || key0 === "dropped")) {
            validate62.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.accepted !== void 0) {
            let data0 = data.accepted;
            const _errs2 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0))) {
              validate62.errors = [{ instancePath: instancePath + "/accepted", schemaPath: "#/properties/accepted/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 < 0 || isNaN(data0)) {
                  validate62.errors = [{ instancePath: instancePath + "/accepted", schemaPath: "#/properties/accepted/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                  return false;
                }
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.dropped !== void 0) {
              let data1 = data.dropped;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate62.errors = [{ instancePath: instancePath + "/dropped", schemaPath: "#/properties/dropped/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 < 0 || isNaN(data1)) {
                    validate62.errors = [{ instancePath: instancePath + "/dropped", schemaPath: "#/properties/dropped/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate62.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate62.errors = vErrors;
  return errors === 0;
}
var validateProbeRequestParams = validate63;
function validate63(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate63.evaluated || (validate63.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.probe === void 0 && (missing0 = "probe") || data.args === void 0 && (missing0 = "args") || data.timeout_ms === void 0 && (missing0 = "timeout_ms")) {
        validate63.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "probe" || key0 === "args" || key0 === "timeout_ms")) {
            validate63.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.probe !== void 0) {
            let data0 = data.probe;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 === "string") {
                if (func1(data0) > 128) {
                  validate63.errors = [{ instancePath: instancePath + "/probe", schemaPath: "#/properties/probe/maxLength", keyword: "maxLength", params: { limit: 128 }, message: "must NOT have more than 128 characters" }];
                  return false;
                } else {
                  if (func1(data0) < 1) {
                    validate63.errors = [{ instancePath: instancePath + "/probe", schemaPath: "#/properties/probe/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  }
                }
              } else {
                validate63.errors = [{ instancePath: instancePath + "/probe", schemaPath: "#/properties/probe/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.timeout_ms !== void 0) {
              let data1 = data.timeout_ms;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate63.errors = [{ instancePath: instancePath + "/timeout_ms", schemaPath: "#/properties/timeout_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 6e5 || isNaN(data1)) {
                    validate63.errors = [{ instancePath: instancePath + "/timeout_ms", schemaPath: "#/properties/timeout_ms/maximum", keyword: "maximum", params: { comparison: "<=", limit: 6e5 }, message: "must be <= 600000" }];
                    return false;
                  } else {
                    if (data1 < 1 || isNaN(data1)) {
                      validate63.errors = [{ instancePath: instancePath + "/timeout_ms", schemaPath: "#/properties/timeout_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate63.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate63.errors = vErrors;
  return errors === 0;
}
var validateProbeRequestResult = validate64;
function validate64(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate64.evaluated || (validate64.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  const _errs0 = errors;
  if (errors === _errs0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.output === void 0 && (missing0 = "output") || data.duration_ms === void 0 && (missing0 = "duration_ms")) {
        validate64.errors = [{ instancePath, schemaPath: "defs.json#/$defs/ProbeOutput/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs2 = errors;
        for (const key0 in data) {
          if (!(key0 === "output" || key0 === "exit_code" || key0 === "stderr" || key0 === "duration_ms")) {
            validate64.errors = [{ instancePath, schemaPath: "defs.json#/$defs/ProbeOutput/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs2 === errors) {
          if (data.exit_code !== void 0) {
            let data0 = data.exit_code;
            const _errs3 = errors;
            if (!(typeof data0 == "number" && (!(data0 % 1) && !isNaN(data0)) && isFinite(data0)) && data0 !== null) {
              validate64.errors = [{ instancePath: instancePath + "/exit_code", schemaPath: "defs.json#/$defs/ProbeOutput/properties/exit_code/type", keyword: "type", params: { type: schema45.properties.exit_code.type }, message: "must be integer,null" }];
              return false;
            }
            var valid1 = _errs3 === errors;
          } else {
            var valid1 = true;
          }
          if (valid1) {
            if (data.stderr !== void 0) {
              let data1 = data.stderr;
              const _errs5 = errors;
              if (typeof data1 !== "string" && data1 !== null) {
                validate64.errors = [{ instancePath: instancePath + "/stderr", schemaPath: "defs.json#/$defs/ProbeOutput/properties/stderr/type", keyword: "type", params: { type: schema45.properties.stderr.type }, message: "must be string,null" }];
                return false;
              }
              var valid1 = _errs5 === errors;
            } else {
              var valid1 = true;
            }
            if (valid1) {
              if (data.duration_ms !== void 0) {
                let data2 = data.duration_ms;
                const _errs7 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate64.errors = [{ instancePath: instancePath + "/duration_ms", schemaPath: "defs.json#/$defs/ProbeOutput/properties/duration_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs7) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 < 0 || isNaN(data2)) {
                      validate64.errors = [{ instancePath: instancePath + "/duration_ms", schemaPath: "defs.json#/$defs/ProbeOutput/properties/duration_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
                var valid1 = _errs7 === errors;
              } else {
                var valid1 = true;
              }
            }
          }
        }
      }
    } else {
      validate64.errors = [{ instancePath, schemaPath: "defs.json#/$defs/ProbeOutput/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate64.errors = vErrors;
  return errors === 0;
}
var validateExecSystemctlStatusArgs = validate65;
var pattern11 = /* @__PURE__ */ new RegExp("^[A-Za-z0-9_@:][A-Za-z0-9_@:.\\-]*$", "u");
function validate65(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate65.evaluated || (validate65.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.unit === void 0 && (missing0 = "unit")) {
        validate65.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "unit")) {
            validate65.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.unit !== void 0) {
            let data0 = data.unit;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 === "string") {
                if (func1(data0) > 256) {
                  validate65.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/maxLength", keyword: "maxLength", params: { limit: 256 }, message: "must NOT have more than 256 characters" }];
                  return false;
                } else {
                  if (func1(data0) < 1) {
                    validate65.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  } else {
                    if (!pattern11.test(data0)) {
                      validate65.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/pattern", keyword: "pattern", params: { pattern: "^[A-Za-z0-9_@:][A-Za-z0-9_@:.\\-]*$" }, message: 'must match pattern "^[A-Za-z0-9_@:][A-Za-z0-9_@:.\\-]*$"' }];
                      return false;
                    }
                  }
                }
              } else {
                validate65.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
          }
        }
      }
    } else {
      validate65.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate65.errors = vErrors;
  return errors === 0;
}
var validateExecSystemctlStatusOutput = validate66;
var schema88 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/probes/exec.systemctl_status.output.json", "title": "ExecSystemctlStatusOutput", "description": "Output of exec.systemctl_status (active and substate are always present).", "type": "object", "required": ["active", "substate"], "additionalProperties": false, "properties": { "active": { "type": "boolean", "description": "ActiveState is active." }, "active_state": { "type": "string", "description": "ActiveState, e.g. active, inactive, failed." }, "substate": { "type": "string", "description": "SubState, e.g. running, dead." }, "load_state": { "type": "string", "description": "LoadState, e.g. loaded, not-found." }, "main_pid": { "type": ["integer", "null"], "minimum": 0, "description": "MainPID; null when 0." }, "since": { "type": ["string", "null"], "format": "date-time", "description": "When the unit entered its active state." } } };
function validate66(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate66.evaluated || (validate66.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.active === void 0 && (missing0 = "active") || data.substate === void 0 && (missing0 = "substate")) {
        validate66.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "active" || key0 === "active_state" || key0 === "substate" || key0 === "load_state" || key0 === "main_pid" || key0 === "since")) {
            validate66.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.active !== void 0) {
            const _errs2 = errors;
            if (typeof data.active !== "boolean") {
              validate66.errors = [{ instancePath: instancePath + "/active", schemaPath: "#/properties/active/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.active_state !== void 0) {
              const _errs4 = errors;
              if (typeof data.active_state !== "string") {
                validate66.errors = [{ instancePath: instancePath + "/active_state", schemaPath: "#/properties/active_state/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.substate !== void 0) {
                const _errs6 = errors;
                if (typeof data.substate !== "string") {
                  validate66.errors = [{ instancePath: instancePath + "/substate", schemaPath: "#/properties/substate/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                  return false;
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.load_state !== void 0) {
                  const _errs8 = errors;
                  if (typeof data.load_state !== "string") {
                    validate66.errors = [{ instancePath: instancePath + "/load_state", schemaPath: "#/properties/load_state/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.main_pid !== void 0) {
                    let data4 = data.main_pid;
                    const _errs10 = errors;
                    if (!(typeof data4 == "number" && (!(data4 % 1) && !isNaN(data4)) && isFinite(data4)) && data4 !== null) {
                      validate66.errors = [{ instancePath: instancePath + "/main_pid", schemaPath: "#/properties/main_pid/type", keyword: "type", params: { type: schema88.properties.main_pid.type }, message: "must be integer,null" }];
                      return false;
                    }
                    if (errors === _errs10) {
                      if (typeof data4 == "number" && isFinite(data4)) {
                        if (data4 < 0 || isNaN(data4)) {
                          validate66.errors = [{ instancePath: instancePath + "/main_pid", schemaPath: "#/properties/main_pid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                          return false;
                        }
                      }
                    }
                    var valid0 = _errs10 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.since !== void 0) {
                      let data5 = data.since;
                      const _errs12 = errors;
                      if (typeof data5 !== "string" && data5 !== null) {
                        validate66.errors = [{ instancePath: instancePath + "/since", schemaPath: "#/properties/since/type", keyword: "type", params: { type: schema88.properties.since.type }, message: "must be string,null" }];
                        return false;
                      }
                      if (errors === _errs12) {
                        if (errors === _errs12) {
                          if (typeof data5 === "string") {
                            if (!formats0.validate(data5)) {
                              validate66.errors = [{ instancePath: instancePath + "/since", schemaPath: "#/properties/since/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                              return false;
                            }
                          }
                        }
                      }
                      var valid0 = _errs12 === errors;
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
    } else {
      validate66.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate66.errors = vErrors;
  return errors === 0;
}
var validateFsDiskUsageArgs = validate67;
var pattern12 = /* @__PURE__ */ new RegExp("^(?![\\s\\S]*(?:^|/)\\.\\.(?:/|$))/[^\\u0000]*$", "u");
function validate67(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate67.evaluated || (validate67.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.path === void 0 && (missing0 = "path")) {
        validate67.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "path")) {
            validate67.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.path !== void 0) {
            let data0 = data.path;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 === "string") {
                if (func1(data0) > 4096) {
                  validate67.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/maxLength", keyword: "maxLength", params: { limit: 4096 }, message: "must NOT have more than 4096 characters" }];
                  return false;
                } else {
                  if (func1(data0) < 1) {
                    validate67.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  } else {
                    if (!pattern12.test(data0)) {
                      validate67.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/pattern", keyword: "pattern", params: { pattern: "^(?![\\s\\S]*(?:^|/)\\.\\.(?:/|$))/[^\\u0000]*$" }, message: 'must match pattern "^(?![\\s\\S]*(?:^|/)\\.\\.(?:/|$))/[^\\u0000]*$"' }];
                      return false;
                    }
                  }
                }
              } else {
                validate67.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
          }
        }
      }
    } else {
      validate67.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate67.errors = vErrors;
  return errors === 0;
}
var validateFsDiskUsageOutput = validate68;
var schema90 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/probes/fs.disk_usage.output.json", "title": "FsDiskUsageOutput", "description": "Output of fs.disk_usage (statfs of the filesystem holding path).", "type": "object", "required": ["path", "total_bytes", "used_bytes", "free_bytes", "used_percent"], "additionalProperties": false, "properties": { "path": { "type": "string" }, "total_bytes": { "type": "integer", "minimum": 0 }, "used_bytes": { "type": "integer", "minimum": 0 }, "free_bytes": { "type": "integer", "minimum": 0, "description": "Bytes available to unprivileged users." }, "used_percent": { "type": "number", "minimum": 0, "maximum": 100 }, "inodes_total": { "type": ["integer", "null"], "minimum": 0 }, "inodes_used": { "type": ["integer", "null"], "minimum": 0 }, "inodes_free": { "type": ["integer", "null"], "minimum": 0 } } };
function validate68(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate68.evaluated || (validate68.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.path === void 0 && (missing0 = "path") || data.total_bytes === void 0 && (missing0 = "total_bytes") || data.used_bytes === void 0 && (missing0 = "used_bytes") || data.free_bytes === void 0 && (missing0 = "free_bytes") || data.used_percent === void 0 && (missing0 = "used_percent")) {
        validate68.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "path" || key0 === "total_bytes" || key0 === "used_bytes" || key0 === "free_bytes" || key0 === "used_percent" || key0 === "inodes_total" || key0 === "inodes_used" || key0 === "inodes_free")) {
            validate68.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.path !== void 0) {
            const _errs2 = errors;
            if (typeof data.path !== "string") {
              validate68.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.total_bytes !== void 0) {
              let data1 = data.total_bytes;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate68.errors = [{ instancePath: instancePath + "/total_bytes", schemaPath: "#/properties/total_bytes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 < 0 || isNaN(data1)) {
                    validate68.errors = [{ instancePath: instancePath + "/total_bytes", schemaPath: "#/properties/total_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.used_bytes !== void 0) {
                let data2 = data.used_bytes;
                const _errs6 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate68.errors = [{ instancePath: instancePath + "/used_bytes", schemaPath: "#/properties/used_bytes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs6) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 < 0 || isNaN(data2)) {
                      validate68.errors = [{ instancePath: instancePath + "/used_bytes", schemaPath: "#/properties/used_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.free_bytes !== void 0) {
                  let data3 = data.free_bytes;
                  const _errs8 = errors;
                  if (!(typeof data3 == "number" && (!(data3 % 1) && !isNaN(data3)) && isFinite(data3))) {
                    validate68.errors = [{ instancePath: instancePath + "/free_bytes", schemaPath: "#/properties/free_bytes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                    return false;
                  }
                  if (errors === _errs8) {
                    if (typeof data3 == "number" && isFinite(data3)) {
                      if (data3 < 0 || isNaN(data3)) {
                        validate68.errors = [{ instancePath: instancePath + "/free_bytes", schemaPath: "#/properties/free_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                        return false;
                      }
                    }
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.used_percent !== void 0) {
                    let data4 = data.used_percent;
                    const _errs10 = errors;
                    if (errors === _errs10) {
                      if (typeof data4 == "number" && isFinite(data4)) {
                        if (data4 > 100 || isNaN(data4)) {
                          validate68.errors = [{ instancePath: instancePath + "/used_percent", schemaPath: "#/properties/used_percent/maximum", keyword: "maximum", params: { comparison: "<=", limit: 100 }, message: "must be <= 100" }];
                          return false;
                        } else {
                          if (data4 < 0 || isNaN(data4)) {
                            validate68.errors = [{ instancePath: instancePath + "/used_percent", schemaPath: "#/properties/used_percent/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                            return false;
                          }
                        }
                      } else {
                        validate68.errors = [{ instancePath: instancePath + "/used_percent", schemaPath: "#/properties/used_percent/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                        return false;
                      }
                    }
                    var valid0 = _errs10 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.inodes_total !== void 0) {
                      let data5 = data.inodes_total;
                      const _errs12 = errors;
                      if (!(typeof data5 == "number" && (!(data5 % 1) && !isNaN(data5)) && isFinite(data5)) && data5 !== null) {
                        validate68.errors = [{ instancePath: instancePath + "/inodes_total", schemaPath: "#/properties/inodes_total/type", keyword: "type", params: { type: schema90.properties.inodes_total.type }, message: "must be integer,null" }];
                        return false;
                      }
                      if (errors === _errs12) {
                        if (typeof data5 == "number" && isFinite(data5)) {
                          if (data5 < 0 || isNaN(data5)) {
                            validate68.errors = [{ instancePath: instancePath + "/inodes_total", schemaPath: "#/properties/inodes_total/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                            return false;
                          }
                        }
                      }
                      var valid0 = _errs12 === errors;
                    } else {
                      var valid0 = true;
                    }
                    if (valid0) {
                      if (data.inodes_used !== void 0) {
                        let data6 = data.inodes_used;
                        const _errs14 = errors;
                        if (!(typeof data6 == "number" && (!(data6 % 1) && !isNaN(data6)) && isFinite(data6)) && data6 !== null) {
                          validate68.errors = [{ instancePath: instancePath + "/inodes_used", schemaPath: "#/properties/inodes_used/type", keyword: "type", params: { type: schema90.properties.inodes_used.type }, message: "must be integer,null" }];
                          return false;
                        }
                        if (errors === _errs14) {
                          if (typeof data6 == "number" && isFinite(data6)) {
                            if (data6 < 0 || isNaN(data6)) {
                              validate68.errors = [{ instancePath: instancePath + "/inodes_used", schemaPath: "#/properties/inodes_used/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                              return false;
                            }
                          }
                        }
                        var valid0 = _errs14 === errors;
                      } else {
                        var valid0 = true;
                      }
                      if (valid0) {
                        if (data.inodes_free !== void 0) {
                          let data7 = data.inodes_free;
                          const _errs16 = errors;
                          if (!(typeof data7 == "number" && (!(data7 % 1) && !isNaN(data7)) && isFinite(data7)) && data7 !== null) {
                            validate68.errors = [{ instancePath: instancePath + "/inodes_free", schemaPath: "#/properties/inodes_free/type", keyword: "type", params: { type: schema90.properties.inodes_free.type }, message: "must be integer,null" }];
                            return false;
                          }
                          if (errors === _errs16) {
                            if (typeof data7 == "number" && isFinite(data7)) {
                              if (data7 < 0 || isNaN(data7)) {
                                validate68.errors = [{ instancePath: instancePath + "/inodes_free", schemaPath: "#/properties/inodes_free/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                return false;
                              }
                            }
                          }
                          var valid0 = _errs16 === errors;
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
    } else {
      validate68.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate68.errors = vErrors;
  return errors === 0;
}
var validateSysUptimeArgs = validate69;
function validate69(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate69.evaluated || (validate69.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      for (const key0 in data) {
        validate69.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
        return false;
        break;
      }
    } else {
      validate69.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate69.errors = vErrors;
  return errors === 0;
}
var validateSysUptimeOutput = validate70;
function validate70(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate70.evaluated || (validate70.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.uptime_secs === void 0 && (missing0 = "uptime_secs") || data.boot_time === void 0 && (missing0 = "boot_time")) {
        validate70.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "uptime_secs" || key0 === "boot_time" || key0 === "load_average")) {
            validate70.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.uptime_secs !== void 0) {
            let data0 = data.uptime_secs;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 == "number" && isFinite(data0)) {
                if (data0 < 0 || isNaN(data0)) {
                  validate70.errors = [{ instancePath: instancePath + "/uptime_secs", schemaPath: "#/properties/uptime_secs/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                  return false;
                }
              } else {
                validate70.errors = [{ instancePath: instancePath + "/uptime_secs", schemaPath: "#/properties/uptime_secs/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                return false;
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.boot_time !== void 0) {
              let data1 = data.boot_time;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (errors === _errs4) {
                  if (typeof data1 === "string") {
                    if (!formats0.validate(data1)) {
                      validate70.errors = [{ instancePath: instancePath + "/boot_time", schemaPath: "#/properties/boot_time/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                      return false;
                    }
                  } else {
                    validate70.errors = [{ instancePath: instancePath + "/boot_time", schemaPath: "#/properties/boot_time/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.load_average !== void 0) {
                let data2 = data.load_average;
                const _errs6 = errors;
                if (errors === _errs6) {
                  if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                    let missing1;
                    if (data2.one === void 0 && (missing1 = "one") || data2.five === void 0 && (missing1 = "five") || data2.fifteen === void 0 && (missing1 = "fifteen")) {
                      validate70.errors = [{ instancePath: instancePath + "/load_average", schemaPath: "#/properties/load_average/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                      return false;
                    } else {
                      const _errs8 = errors;
                      for (const key1 in data2) {
                        if (!(key1 === "one" || key1 === "five" || key1 === "fifteen")) {
                          validate70.errors = [{ instancePath: instancePath + "/load_average", schemaPath: "#/properties/load_average/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                          return false;
                          break;
                        }
                      }
                      if (_errs8 === errors) {
                        if (data2.one !== void 0) {
                          let data3 = data2.one;
                          const _errs9 = errors;
                          if (errors === _errs9) {
                            if (typeof data3 == "number" && isFinite(data3)) {
                              if (data3 < 0 || isNaN(data3)) {
                                validate70.errors = [{ instancePath: instancePath + "/load_average/one", schemaPath: "#/properties/load_average/properties/one/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                return false;
                              }
                            } else {
                              validate70.errors = [{ instancePath: instancePath + "/load_average/one", schemaPath: "#/properties/load_average/properties/one/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                              return false;
                            }
                          }
                          var valid1 = _errs9 === errors;
                        } else {
                          var valid1 = true;
                        }
                        if (valid1) {
                          if (data2.five !== void 0) {
                            let data4 = data2.five;
                            const _errs11 = errors;
                            if (errors === _errs11) {
                              if (typeof data4 == "number" && isFinite(data4)) {
                                if (data4 < 0 || isNaN(data4)) {
                                  validate70.errors = [{ instancePath: instancePath + "/load_average/five", schemaPath: "#/properties/load_average/properties/five/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                  return false;
                                }
                              } else {
                                validate70.errors = [{ instancePath: instancePath + "/load_average/five", schemaPath: "#/properties/load_average/properties/five/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                                return false;
                              }
                            }
                            var valid1 = _errs11 === errors;
                          } else {
                            var valid1 = true;
                          }
                          if (valid1) {
                            if (data2.fifteen !== void 0) {
                              let data5 = data2.fifteen;
                              const _errs13 = errors;
                              if (errors === _errs13) {
                                if (typeof data5 == "number" && isFinite(data5)) {
                                  if (data5 < 0 || isNaN(data5)) {
                                    validate70.errors = [{ instancePath: instancePath + "/load_average/fifteen", schemaPath: "#/properties/load_average/properties/fifteen/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                    return false;
                                  }
                                } else {
                                  validate70.errors = [{ instancePath: instancePath + "/load_average/fifteen", schemaPath: "#/properties/load_average/properties/fifteen/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                                  return false;
                                }
                              }
                              var valid1 = _errs13 === errors;
                            } else {
                              var valid1 = true;
                            }
                          }
                        }
                      }
                    }
                  } else {
                    validate70.errors = [{ instancePath: instancePath + "/load_average", schemaPath: "#/properties/load_average/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                    return false;
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate70.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate70.errors = vErrors;
  return errors === 0;
}
var validateSysOsReleaseArgs = validate71;
function validate71(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate71.evaluated || (validate71.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      for (const key0 in data) {
        validate71.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
        return false;
        break;
      }
    } else {
      validate71.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate71.errors = vErrors;
  return errors === 0;
}
var validateSysOsReleaseOutput = validate72;
var schema94 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/probes/sys.os_release.output.json", "title": "SysOsReleaseOutput", "description": "Output of sys.os_release: the host's os-release(5) file (/etc/os-release, else /usr/lib/os-release). id, name and pretty_name carry os-release(5)'s defaults (linux, Linux, Linux) when the file omits them.", "type": "object", "required": ["source", "id", "name", "pretty_name", "fields"], "additionalProperties": false, "properties": { "source": { "type": "string", "description": "The file that was read." }, "id": { "type": "string", "description": "ID, e.g. debian." }, "id_like": { "type": "array", "items": { "type": "string" }, "description": "ID_LIKE split on spaces." }, "name": { "type": "string", "description": "NAME, e.g. Debian GNU/Linux." }, "pretty_name": { "type": "string", "description": "PRETTY_NAME." }, "version": { "type": "string", "description": "VERSION." }, "version_id": { "type": "string", "description": "VERSION_ID, e.g. 12." }, "version_codename": { "type": "string", "description": "VERSION_CODENAME, e.g. bookworm." }, "build_id": { "type": "string", "description": "BUILD_ID (rolling distributions)." }, "fields": { "type": "object", "description": "Every KEY=value assignment of the file, unquoted, by key.", "additionalProperties": { "type": "string", "maxLength": 4096 }, "maxProperties": 256 } } };
function validate72(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate72.evaluated || (validate72.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.source === void 0 && (missing0 = "source") || data.id === void 0 && (missing0 = "id") || data.name === void 0 && (missing0 = "name") || data.pretty_name === void 0 && (missing0 = "pretty_name") || data.fields === void 0 && (missing0 = "fields")) {
        validate72.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!func7.call(schema94.properties, key0)) {
            validate72.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.source !== void 0) {
            const _errs2 = errors;
            if (typeof data.source !== "string") {
              validate72.errors = [{ instancePath: instancePath + "/source", schemaPath: "#/properties/source/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.id !== void 0) {
              const _errs4 = errors;
              if (typeof data.id !== "string") {
                validate72.errors = [{ instancePath: instancePath + "/id", schemaPath: "#/properties/id/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.id_like !== void 0) {
                let data2 = data.id_like;
                const _errs6 = errors;
                if (errors === _errs6) {
                  if (Array.isArray(data2)) {
                    var valid1 = true;
                    const len0 = data2.length;
                    for (let i0 = 0; i0 < len0; i0++) {
                      const _errs8 = errors;
                      if (typeof data2[i0] !== "string") {
                        validate72.errors = [{ instancePath: instancePath + "/id_like/" + i0, schemaPath: "#/properties/id_like/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                        return false;
                      }
                      var valid1 = _errs8 === errors;
                      if (!valid1) {
                        break;
                      }
                    }
                  } else {
                    validate72.errors = [{ instancePath: instancePath + "/id_like", schemaPath: "#/properties/id_like/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                    return false;
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.name !== void 0) {
                  const _errs10 = errors;
                  if (typeof data.name !== "string") {
                    validate72.errors = [{ instancePath: instancePath + "/name", schemaPath: "#/properties/name/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                    return false;
                  }
                  var valid0 = _errs10 === errors;
                } else {
                  var valid0 = true;
                }
                if (valid0) {
                  if (data.pretty_name !== void 0) {
                    const _errs12 = errors;
                    if (typeof data.pretty_name !== "string") {
                      validate72.errors = [{ instancePath: instancePath + "/pretty_name", schemaPath: "#/properties/pretty_name/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                      return false;
                    }
                    var valid0 = _errs12 === errors;
                  } else {
                    var valid0 = true;
                  }
                  if (valid0) {
                    if (data.version !== void 0) {
                      const _errs14 = errors;
                      if (typeof data.version !== "string") {
                        validate72.errors = [{ instancePath: instancePath + "/version", schemaPath: "#/properties/version/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                        return false;
                      }
                      var valid0 = _errs14 === errors;
                    } else {
                      var valid0 = true;
                    }
                    if (valid0) {
                      if (data.version_id !== void 0) {
                        const _errs16 = errors;
                        if (typeof data.version_id !== "string") {
                          validate72.errors = [{ instancePath: instancePath + "/version_id", schemaPath: "#/properties/version_id/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                          return false;
                        }
                        var valid0 = _errs16 === errors;
                      } else {
                        var valid0 = true;
                      }
                      if (valid0) {
                        if (data.version_codename !== void 0) {
                          const _errs18 = errors;
                          if (typeof data.version_codename !== "string") {
                            validate72.errors = [{ instancePath: instancePath + "/version_codename", schemaPath: "#/properties/version_codename/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                            return false;
                          }
                          var valid0 = _errs18 === errors;
                        } else {
                          var valid0 = true;
                        }
                        if (valid0) {
                          if (data.build_id !== void 0) {
                            const _errs20 = errors;
                            if (typeof data.build_id !== "string") {
                              validate72.errors = [{ instancePath: instancePath + "/build_id", schemaPath: "#/properties/build_id/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                              return false;
                            }
                            var valid0 = _errs20 === errors;
                          } else {
                            var valid0 = true;
                          }
                          if (valid0) {
                            if (data.fields !== void 0) {
                              let data10 = data.fields;
                              const _errs22 = errors;
                              if (errors === _errs22) {
                                if (data10 && typeof data10 == "object" && !Array.isArray(data10)) {
                                  if (Object.keys(data10).length > 256) {
                                    validate72.errors = [{ instancePath: instancePath + "/fields", schemaPath: "#/properties/fields/maxProperties", keyword: "maxProperties", params: { limit: 256 }, message: "must NOT have more than 256 properties" }];
                                    return false;
                                  } else {
                                    for (const key1 in data10) {
                                      let data11 = data10[key1];
                                      const _errs25 = errors;
                                      if (errors === _errs25) {
                                        if (typeof data11 === "string") {
                                          if (func1(data11) > 4096) {
                                            validate72.errors = [{ instancePath: instancePath + "/fields/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/properties/fields/additionalProperties/maxLength", keyword: "maxLength", params: { limit: 4096 }, message: "must NOT have more than 4096 characters" }];
                                            return false;
                                          }
                                        } else {
                                          validate72.errors = [{ instancePath: instancePath + "/fields/" + key1.replace(/~/g, "~0").replace(/\//g, "~1"), schemaPath: "#/properties/fields/additionalProperties/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                          return false;
                                        }
                                      }
                                      var valid2 = _errs25 === errors;
                                      if (!valid2) {
                                        break;
                                      }
                                    }
                                  }
                                } else {
                                  validate72.errors = [{ instancePath: instancePath + "/fields", schemaPath: "#/properties/fields/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                                  return false;
                                }
                              }
                              var valid0 = _errs22 === errors;
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
    } else {
      validate72.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate72.errors = vErrors;
  return errors === 0;
}
var validateProcTopArgs = validate73;
var schema95 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/probes/proc.top.args.json", "title": "ProcTopArgs", "description": "Args of proc.top: which resource to rank by (default cpu) and how many processes to return (default 10).", "type": "object", "additionalProperties": false, "properties": { "by": { "type": "string", "enum": ["cpu", "memory"], "description": "Rank by CPU use over the sampling window, or by resident memory. Default cpu." }, "limit": { "type": "integer", "minimum": 1, "maximum": 100, "description": "Number of processes returned. Default 10." } } };
function validate73(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate73.evaluated || (validate73.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
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
        if (!(key0 === "by" || key0 === "limit")) {
          validate73.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
          return false;
          break;
        }
      }
      if (_errs1 === errors) {
        if (data.by !== void 0) {
          let data0 = data.by;
          const _errs2 = errors;
          if (typeof data0 !== "string") {
            validate73.errors = [{ instancePath: instancePath + "/by", schemaPath: "#/properties/by/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
            return false;
          }
          if (!(data0 === "cpu" || data0 === "memory")) {
            validate73.errors = [{ instancePath: instancePath + "/by", schemaPath: "#/properties/by/enum", keyword: "enum", params: { allowedValues: schema95.properties.by.enum }, message: "must be equal to one of the allowed values" }];
            return false;
          }
          var valid0 = _errs2 === errors;
        } else {
          var valid0 = true;
        }
        if (valid0) {
          if (data.limit !== void 0) {
            let data1 = data.limit;
            const _errs4 = errors;
            if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
              validate73.errors = [{ instancePath: instancePath + "/limit", schemaPath: "#/properties/limit/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
              return false;
            }
            if (errors === _errs4) {
              if (typeof data1 == "number" && isFinite(data1)) {
                if (data1 > 100 || isNaN(data1)) {
                  validate73.errors = [{ instancePath: instancePath + "/limit", schemaPath: "#/properties/limit/maximum", keyword: "maximum", params: { comparison: "<=", limit: 100 }, message: "must be <= 100" }];
                  return false;
                } else {
                  if (data1 < 1 || isNaN(data1)) {
                    validate73.errors = [{ instancePath: instancePath + "/limit", schemaPath: "#/properties/limit/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                    return false;
                  }
                }
              }
            }
            var valid0 = _errs4 === errors;
          } else {
            var valid0 = true;
          }
        }
      }
    } else {
      validate73.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate73.errors = vErrors;
  return errors === 0;
}
var validateProcTopOutput = validate74;
var schema96 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/probes/proc.top.output.json", "title": "ProcTopOutput", "description": "Output of proc.top: the top processes from /proc/<pid>/stat and /proc/<pid>/status, sampled twice sample_ms apart. cpu_percent is CPU time used in that window over its length (100 = one full core, as top shows it; can exceed 100 on several cores).", "type": "object", "required": ["by", "sample_ms", "total_processes", "processes"], "additionalProperties": false, "properties": { "by": { "type": "string", "enum": ["cpu", "memory"] }, "sample_ms": { "type": "integer", "minimum": 0, "description": "Length of the CPU sampling window." }, "total_processes": { "type": "integer", "minimum": 0, "description": "Processes seen in both samples." }, "processes": { "type": "array", "maxItems": 100, "items": { "title": "ProcTopProcess", "type": "object", "required": ["pid", "command", "cpu_percent", "mem_rss_bytes"], "additionalProperties": false, "properties": { "pid": { "type": "integer", "minimum": 1 }, "ppid": { "type": "integer", "minimum": 0 }, "command": { "type": "string", "maxLength": 64, "description": "comm (the executable name as the kernel keeps it, at most 15 bytes on Linux)." }, "state": { "type": "string", "maxLength": 1, "description": "Process state letter (R, S, D, Z, T, I, ...)." }, "cpu_percent": { "type": "number", "minimum": 0 }, "mem_rss_bytes": { "type": "integer", "minimum": 0, "description": "Resident set size (VmRSS); 0 for kernel threads." }, "uid": { "type": "integer", "minimum": 0, "description": "Real user id." }, "user": { "type": "string", "description": "User name of uid, when /etc/passwd names it." } } } } } };
function validate74(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate74.evaluated || (validate74.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.by === void 0 && (missing0 = "by") || data.sample_ms === void 0 && (missing0 = "sample_ms") || data.total_processes === void 0 && (missing0 = "total_processes") || data.processes === void 0 && (missing0 = "processes")) {
        validate74.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "by" || key0 === "sample_ms" || key0 === "total_processes" || key0 === "processes")) {
            validate74.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.by !== void 0) {
            let data0 = data.by;
            const _errs2 = errors;
            if (typeof data0 !== "string") {
              validate74.errors = [{ instancePath: instancePath + "/by", schemaPath: "#/properties/by/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            if (!(data0 === "cpu" || data0 === "memory")) {
              validate74.errors = [{ instancePath: instancePath + "/by", schemaPath: "#/properties/by/enum", keyword: "enum", params: { allowedValues: schema96.properties.by.enum }, message: "must be equal to one of the allowed values" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.sample_ms !== void 0) {
              let data1 = data.sample_ms;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate74.errors = [{ instancePath: instancePath + "/sample_ms", schemaPath: "#/properties/sample_ms/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 < 0 || isNaN(data1)) {
                    validate74.errors = [{ instancePath: instancePath + "/sample_ms", schemaPath: "#/properties/sample_ms/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                    return false;
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.total_processes !== void 0) {
                let data2 = data.total_processes;
                const _errs6 = errors;
                if (!(typeof data2 == "number" && (!(data2 % 1) && !isNaN(data2)) && isFinite(data2))) {
                  validate74.errors = [{ instancePath: instancePath + "/total_processes", schemaPath: "#/properties/total_processes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                  return false;
                }
                if (errors === _errs6) {
                  if (typeof data2 == "number" && isFinite(data2)) {
                    if (data2 < 0 || isNaN(data2)) {
                      validate74.errors = [{ instancePath: instancePath + "/total_processes", schemaPath: "#/properties/total_processes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                      return false;
                    }
                  }
                }
                var valid0 = _errs6 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.processes !== void 0) {
                  let data3 = data.processes;
                  const _errs8 = errors;
                  if (errors === _errs8) {
                    if (Array.isArray(data3)) {
                      if (data3.length > 100) {
                        validate74.errors = [{ instancePath: instancePath + "/processes", schemaPath: "#/properties/processes/maxItems", keyword: "maxItems", params: { limit: 100 }, message: "must NOT have more than 100 items" }];
                        return false;
                      } else {
                        var valid1 = true;
                        const len0 = data3.length;
                        for (let i0 = 0; i0 < len0; i0++) {
                          let data4 = data3[i0];
                          const _errs10 = errors;
                          if (errors === _errs10) {
                            if (data4 && typeof data4 == "object" && !Array.isArray(data4)) {
                              let missing1;
                              if (data4.pid === void 0 && (missing1 = "pid") || data4.command === void 0 && (missing1 = "command") || data4.cpu_percent === void 0 && (missing1 = "cpu_percent") || data4.mem_rss_bytes === void 0 && (missing1 = "mem_rss_bytes")) {
                                validate74.errors = [{ instancePath: instancePath + "/processes/" + i0, schemaPath: "#/properties/processes/items/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                                return false;
                              } else {
                                const _errs12 = errors;
                                for (const key1 in data4) {
                                  if (!(key1 === "pid" || key1 === "ppid" || key1 === "command" || key1 === "state" || key1 === "cpu_percent" || key1 === "mem_rss_bytes" || key1 === "uid" || key1 === "user")) {
                                    validate74.errors = [{ instancePath: instancePath + "/processes/" + i0, schemaPath: "#/properties/processes/items/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                                    return false;
                                    break;
                                  }
                                }
                                if (_errs12 === errors) {
                                  if (data4.pid !== void 0) {
                                    let data5 = data4.pid;
                                    const _errs13 = errors;
                                    if (!(typeof data5 == "number" && (!(data5 % 1) && !isNaN(data5)) && isFinite(data5))) {
                                      validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/pid", schemaPath: "#/properties/processes/items/properties/pid/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                      return false;
                                    }
                                    if (errors === _errs13) {
                                      if (typeof data5 == "number" && isFinite(data5)) {
                                        if (data5 < 1 || isNaN(data5)) {
                                          validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/pid", schemaPath: "#/properties/processes/items/properties/pid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                          return false;
                                        }
                                      }
                                    }
                                    var valid2 = _errs13 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data4.ppid !== void 0) {
                                      let data6 = data4.ppid;
                                      const _errs15 = errors;
                                      if (!(typeof data6 == "number" && (!(data6 % 1) && !isNaN(data6)) && isFinite(data6))) {
                                        validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/ppid", schemaPath: "#/properties/processes/items/properties/ppid/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                        return false;
                                      }
                                      if (errors === _errs15) {
                                        if (typeof data6 == "number" && isFinite(data6)) {
                                          if (data6 < 0 || isNaN(data6)) {
                                            validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/ppid", schemaPath: "#/properties/processes/items/properties/ppid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                            return false;
                                          }
                                        }
                                      }
                                      var valid2 = _errs15 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                    if (valid2) {
                                      if (data4.command !== void 0) {
                                        let data7 = data4.command;
                                        const _errs17 = errors;
                                        if (errors === _errs17) {
                                          if (typeof data7 === "string") {
                                            if (func1(data7) > 64) {
                                              validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/command", schemaPath: "#/properties/processes/items/properties/command/maxLength", keyword: "maxLength", params: { limit: 64 }, message: "must NOT have more than 64 characters" }];
                                              return false;
                                            }
                                          } else {
                                            validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/command", schemaPath: "#/properties/processes/items/properties/command/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                            return false;
                                          }
                                        }
                                        var valid2 = _errs17 === errors;
                                      } else {
                                        var valid2 = true;
                                      }
                                      if (valid2) {
                                        if (data4.state !== void 0) {
                                          let data8 = data4.state;
                                          const _errs19 = errors;
                                          if (errors === _errs19) {
                                            if (typeof data8 === "string") {
                                              if (func1(data8) > 1) {
                                                validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/state", schemaPath: "#/properties/processes/items/properties/state/maxLength", keyword: "maxLength", params: { limit: 1 }, message: "must NOT have more than 1 characters" }];
                                                return false;
                                              }
                                            } else {
                                              validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/state", schemaPath: "#/properties/processes/items/properties/state/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                              return false;
                                            }
                                          }
                                          var valid2 = _errs19 === errors;
                                        } else {
                                          var valid2 = true;
                                        }
                                        if (valid2) {
                                          if (data4.cpu_percent !== void 0) {
                                            let data9 = data4.cpu_percent;
                                            const _errs21 = errors;
                                            if (errors === _errs21) {
                                              if (typeof data9 == "number" && isFinite(data9)) {
                                                if (data9 < 0 || isNaN(data9)) {
                                                  validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/cpu_percent", schemaPath: "#/properties/processes/items/properties/cpu_percent/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                  return false;
                                                }
                                              } else {
                                                validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/cpu_percent", schemaPath: "#/properties/processes/items/properties/cpu_percent/type", keyword: "type", params: { type: "number" }, message: "must be number" }];
                                                return false;
                                              }
                                            }
                                            var valid2 = _errs21 === errors;
                                          } else {
                                            var valid2 = true;
                                          }
                                          if (valid2) {
                                            if (data4.mem_rss_bytes !== void 0) {
                                              let data10 = data4.mem_rss_bytes;
                                              const _errs23 = errors;
                                              if (!(typeof data10 == "number" && (!(data10 % 1) && !isNaN(data10)) && isFinite(data10))) {
                                                validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/mem_rss_bytes", schemaPath: "#/properties/processes/items/properties/mem_rss_bytes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                return false;
                                              }
                                              if (errors === _errs23) {
                                                if (typeof data10 == "number" && isFinite(data10)) {
                                                  if (data10 < 0 || isNaN(data10)) {
                                                    validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/mem_rss_bytes", schemaPath: "#/properties/processes/items/properties/mem_rss_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                    return false;
                                                  }
                                                }
                                              }
                                              var valid2 = _errs23 === errors;
                                            } else {
                                              var valid2 = true;
                                            }
                                            if (valid2) {
                                              if (data4.uid !== void 0) {
                                                let data11 = data4.uid;
                                                const _errs25 = errors;
                                                if (!(typeof data11 == "number" && (!(data11 % 1) && !isNaN(data11)) && isFinite(data11))) {
                                                  validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/uid", schemaPath: "#/properties/processes/items/properties/uid/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                                  return false;
                                                }
                                                if (errors === _errs25) {
                                                  if (typeof data11 == "number" && isFinite(data11)) {
                                                    if (data11 < 0 || isNaN(data11)) {
                                                      validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/uid", schemaPath: "#/properties/processes/items/properties/uid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                                      return false;
                                                    }
                                                  }
                                                }
                                                var valid2 = _errs25 === errors;
                                              } else {
                                                var valid2 = true;
                                              }
                                              if (valid2) {
                                                if (data4.user !== void 0) {
                                                  const _errs27 = errors;
                                                  if (typeof data4.user !== "string") {
                                                    validate74.errors = [{ instancePath: instancePath + "/processes/" + i0 + "/user", schemaPath: "#/properties/processes/items/properties/user/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                                    return false;
                                                  }
                                                  var valid2 = _errs27 === errors;
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
                                }
                              }
                            } else {
                              validate74.errors = [{ instancePath: instancePath + "/processes/" + i0, schemaPath: "#/properties/processes/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                              return false;
                            }
                          }
                          var valid1 = _errs10 === errors;
                          if (!valid1) {
                            break;
                          }
                        }
                      }
                    } else {
                      validate74.errors = [{ instancePath: instancePath + "/processes", schemaPath: "#/properties/processes/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                      return false;
                    }
                  }
                  var valid0 = _errs8 === errors;
                } else {
                  var valid0 = true;
                }
              }
            }
          }
        }
      }
    } else {
      validate74.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate74.errors = vErrors;
  return errors === 0;
}
var validateNetListeningSocketsArgs = validate75;
function validate75(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate75.evaluated || (validate75.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      for (const key0 in data) {
        validate75.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
        return false;
        break;
      }
    } else {
      validate75.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate75.errors = vErrors;
  return errors === 0;
}
var validateNetListeningSocketsOutput = validate76;
var schema98 = { "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://cortex.invalid/schemas/v1/probes/net.listening_sockets.output.json", "title": "NetListeningSocketsOutput", "description": "Output of net.listening_sockets: TCP sockets in LISTEN state and unconnected UDP sockets, from /proc/net/tcp, tcp6, udp and udp6. pid is found by matching socket inodes in /proc/<pid>/fd; it is null when not visible to the agent (other users' processes without privileges).", "type": "object", "required": ["sockets", "truncated"], "additionalProperties": false, "properties": { "sockets": { "type": "array", "maxItems": 4096, "items": { "title": "ListeningSocket", "type": "object", "required": ["protocol", "local_address", "port"], "additionalProperties": false, "properties": { "protocol": { "type": "string", "enum": ["tcp", "tcp6", "udp", "udp6"] }, "local_address": { "type": "string", "anyOf": [{ "type": "string", "format": "ipv4" }, { "type": "string", "format": "ipv6" }], "description": "Bound address: 0.0.0.0 or :: for all addresses; IPv6 in RFC 5952 form." }, "port": { "type": "integer", "minimum": 0, "maximum": 65535 }, "inode": { "type": "integer", "minimum": 0 }, "uid": { "type": "integer", "minimum": 0 }, "pid": { "type": ["integer", "null"], "minimum": 1, "description": "Owning process, null when unknown." }, "command": { "type": "string", "maxLength": 64, "description": "comm of pid, when pid is known." } } } }, "truncated": { "type": "boolean", "description": "More than 4096 sockets were found; the first 4096 (by protocol, then port) are returned." } } };
var formats20 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
var formats22 = /^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$/i;
function validate76(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate76.evaluated || (validate76.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.sockets === void 0 && (missing0 = "sockets") || data.truncated === void 0 && (missing0 = "truncated")) {
        validate76.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "sockets" || key0 === "truncated")) {
            validate76.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.sockets !== void 0) {
            let data0 = data.sockets;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (Array.isArray(data0)) {
                if (data0.length > 4096) {
                  validate76.errors = [{ instancePath: instancePath + "/sockets", schemaPath: "#/properties/sockets/maxItems", keyword: "maxItems", params: { limit: 4096 }, message: "must NOT have more than 4096 items" }];
                  return false;
                } else {
                  var valid1 = true;
                  const len0 = data0.length;
                  for (let i0 = 0; i0 < len0; i0++) {
                    let data1 = data0[i0];
                    const _errs4 = errors;
                    if (errors === _errs4) {
                      if (data1 && typeof data1 == "object" && !Array.isArray(data1)) {
                        let missing1;
                        if (data1.protocol === void 0 && (missing1 = "protocol") || data1.local_address === void 0 && (missing1 = "local_address") || data1.port === void 0 && (missing1 = "port")) {
                          validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0, schemaPath: "#/properties/sockets/items/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                          return false;
                        } else {
                          const _errs6 = errors;
                          for (const key1 in data1) {
                            if (!(key1 === "protocol" || key1 === "local_address" || key1 === "port" || key1 === "inode" || key1 === "uid" || key1 === "pid" || key1 === "command")) {
                              validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0, schemaPath: "#/properties/sockets/items/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                              return false;
                              break;
                            }
                          }
                          if (_errs6 === errors) {
                            if (data1.protocol !== void 0) {
                              let data2 = data1.protocol;
                              const _errs7 = errors;
                              if (typeof data2 !== "string") {
                                validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/protocol", schemaPath: "#/properties/sockets/items/properties/protocol/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                return false;
                              }
                              if (!(data2 === "tcp" || data2 === "tcp6" || data2 === "udp" || data2 === "udp6")) {
                                validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/protocol", schemaPath: "#/properties/sockets/items/properties/protocol/enum", keyword: "enum", params: { allowedValues: schema98.properties.sockets.items.properties.protocol.enum }, message: "must be equal to one of the allowed values" }];
                                return false;
                              }
                              var valid2 = _errs7 === errors;
                            } else {
                              var valid2 = true;
                            }
                            if (valid2) {
                              if (data1.local_address !== void 0) {
                                let data3 = data1.local_address;
                                const _errs9 = errors;
                                if (typeof data3 !== "string") {
                                  validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/local_address", schemaPath: "#/properties/sockets/items/properties/local_address/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                  return false;
                                }
                                const _errs11 = errors;
                                let valid3 = false;
                                const _errs12 = errors;
                                if (errors === _errs12) {
                                  if (errors === _errs12) {
                                    if (typeof data3 === "string") {
                                      if (!formats20.test(data3)) {
                                        const err0 = { instancePath: instancePath + "/sockets/" + i0 + "/local_address", schemaPath: "#/properties/sockets/items/properties/local_address/anyOf/0/format", keyword: "format", params: { format: "ipv4" }, message: 'must match format "ipv4"' };
                                        if (vErrors === null) {
                                          vErrors = [err0];
                                        } else {
                                          vErrors.push(err0);
                                        }
                                        errors++;
                                      }
                                    } else {
                                      const err1 = { instancePath: instancePath + "/sockets/" + i0 + "/local_address", schemaPath: "#/properties/sockets/items/properties/local_address/anyOf/0/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                                      if (vErrors === null) {
                                        vErrors = [err1];
                                      } else {
                                        vErrors.push(err1);
                                      }
                                      errors++;
                                    }
                                  }
                                }
                                var _valid0 = _errs12 === errors;
                                valid3 = valid3 || _valid0;
                                const _errs14 = errors;
                                if (errors === _errs14) {
                                  if (errors === _errs14) {
                                    if (typeof data3 === "string") {
                                      if (!formats22.test(data3)) {
                                        const err2 = { instancePath: instancePath + "/sockets/" + i0 + "/local_address", schemaPath: "#/properties/sockets/items/properties/local_address/anyOf/1/format", keyword: "format", params: { format: "ipv6" }, message: 'must match format "ipv6"' };
                                        if (vErrors === null) {
                                          vErrors = [err2];
                                        } else {
                                          vErrors.push(err2);
                                        }
                                        errors++;
                                      }
                                    } else {
                                      const err3 = { instancePath: instancePath + "/sockets/" + i0 + "/local_address", schemaPath: "#/properties/sockets/items/properties/local_address/anyOf/1/type", keyword: "type", params: { type: "string" }, message: "must be string" };
                                      if (vErrors === null) {
                                        vErrors = [err3];
                                      } else {
                                        vErrors.push(err3);
                                      }
                                      errors++;
                                    }
                                  }
                                }
                                var _valid0 = _errs14 === errors;
                                valid3 = valid3 || _valid0;
                                if (!valid3) {
                                  const err4 = { instancePath: instancePath + "/sockets/" + i0 + "/local_address", schemaPath: "#/properties/sockets/items/properties/local_address/anyOf", keyword: "anyOf", params: {}, message: "must match a schema in anyOf" };
                                  if (vErrors === null) {
                                    vErrors = [err4];
                                  } else {
                                    vErrors.push(err4);
                                  }
                                  errors++;
                                  validate76.errors = vErrors;
                                  return false;
                                } else {
                                  errors = _errs11;
                                  if (vErrors !== null) {
                                    if (_errs11) {
                                      vErrors.length = _errs11;
                                    } else {
                                      vErrors = null;
                                    }
                                  }
                                }
                                var valid2 = _errs9 === errors;
                              } else {
                                var valid2 = true;
                              }
                              if (valid2) {
                                if (data1.port !== void 0) {
                                  let data4 = data1.port;
                                  const _errs16 = errors;
                                  if (!(typeof data4 == "number" && (!(data4 % 1) && !isNaN(data4)) && isFinite(data4))) {
                                    validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/port", schemaPath: "#/properties/sockets/items/properties/port/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                    return false;
                                  }
                                  if (errors === _errs16) {
                                    if (typeof data4 == "number" && isFinite(data4)) {
                                      if (data4 > 65535 || isNaN(data4)) {
                                        validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/port", schemaPath: "#/properties/sockets/items/properties/port/maximum", keyword: "maximum", params: { comparison: "<=", limit: 65535 }, message: "must be <= 65535" }];
                                        return false;
                                      } else {
                                        if (data4 < 0 || isNaN(data4)) {
                                          validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/port", schemaPath: "#/properties/sockets/items/properties/port/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                          return false;
                                        }
                                      }
                                    }
                                  }
                                  var valid2 = _errs16 === errors;
                                } else {
                                  var valid2 = true;
                                }
                                if (valid2) {
                                  if (data1.inode !== void 0) {
                                    let data5 = data1.inode;
                                    const _errs18 = errors;
                                    if (!(typeof data5 == "number" && (!(data5 % 1) && !isNaN(data5)) && isFinite(data5))) {
                                      validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/inode", schemaPath: "#/properties/sockets/items/properties/inode/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                      return false;
                                    }
                                    if (errors === _errs18) {
                                      if (typeof data5 == "number" && isFinite(data5)) {
                                        if (data5 < 0 || isNaN(data5)) {
                                          validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/inode", schemaPath: "#/properties/sockets/items/properties/inode/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                          return false;
                                        }
                                      }
                                    }
                                    var valid2 = _errs18 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data1.uid !== void 0) {
                                      let data6 = data1.uid;
                                      const _errs20 = errors;
                                      if (!(typeof data6 == "number" && (!(data6 % 1) && !isNaN(data6)) && isFinite(data6))) {
                                        validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/uid", schemaPath: "#/properties/sockets/items/properties/uid/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                        return false;
                                      }
                                      if (errors === _errs20) {
                                        if (typeof data6 == "number" && isFinite(data6)) {
                                          if (data6 < 0 || isNaN(data6)) {
                                            validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/uid", schemaPath: "#/properties/sockets/items/properties/uid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                            return false;
                                          }
                                        }
                                      }
                                      var valid2 = _errs20 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                    if (valid2) {
                                      if (data1.pid !== void 0) {
                                        let data7 = data1.pid;
                                        const _errs22 = errors;
                                        if (!(typeof data7 == "number" && (!(data7 % 1) && !isNaN(data7)) && isFinite(data7)) && data7 !== null) {
                                          validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/pid", schemaPath: "#/properties/sockets/items/properties/pid/type", keyword: "type", params: { type: schema98.properties.sockets.items.properties.pid.type }, message: "must be integer,null" }];
                                          return false;
                                        }
                                        if (errors === _errs22) {
                                          if (typeof data7 == "number" && isFinite(data7)) {
                                            if (data7 < 1 || isNaN(data7)) {
                                              validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/pid", schemaPath: "#/properties/sockets/items/properties/pid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                              return false;
                                            }
                                          }
                                        }
                                        var valid2 = _errs22 === errors;
                                      } else {
                                        var valid2 = true;
                                      }
                                      if (valid2) {
                                        if (data1.command !== void 0) {
                                          let data8 = data1.command;
                                          const _errs24 = errors;
                                          if (errors === _errs24) {
                                            if (typeof data8 === "string") {
                                              if (func1(data8) > 64) {
                                                validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/command", schemaPath: "#/properties/sockets/items/properties/command/maxLength", keyword: "maxLength", params: { limit: 64 }, message: "must NOT have more than 64 characters" }];
                                                return false;
                                              }
                                            } else {
                                              validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0 + "/command", schemaPath: "#/properties/sockets/items/properties/command/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                              return false;
                                            }
                                          }
                                          var valid2 = _errs24 === errors;
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
                        }
                      } else {
                        validate76.errors = [{ instancePath: instancePath + "/sockets/" + i0, schemaPath: "#/properties/sockets/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                        return false;
                      }
                    }
                    var valid1 = _errs4 === errors;
                    if (!valid1) {
                      break;
                    }
                  }
                }
              } else {
                validate76.errors = [{ instancePath: instancePath + "/sockets", schemaPath: "#/properties/sockets/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                return false;
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.truncated !== void 0) {
              const _errs26 = errors;
              if (typeof data.truncated !== "boolean") {
                validate76.errors = [{ instancePath: instancePath + "/truncated", schemaPath: "#/properties/truncated/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean" }];
                return false;
              }
              var valid0 = _errs26 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate76.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate76.errors = vErrors;
  return errors === 0;
}
var validateJournalTailArgs = validate77;
function validate77(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate77.evaluated || (validate77.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.unit === void 0 && (missing0 = "unit")) {
        validate77.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "unit" || key0 === "lines")) {
            validate77.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.unit !== void 0) {
            let data0 = data.unit;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 === "string") {
                if (func1(data0) > 256) {
                  validate77.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/maxLength", keyword: "maxLength", params: { limit: 256 }, message: "must NOT have more than 256 characters" }];
                  return false;
                } else {
                  if (func1(data0) < 1) {
                    validate77.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  } else {
                    if (!pattern11.test(data0)) {
                      validate77.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/pattern", keyword: "pattern", params: { pattern: "^[A-Za-z0-9_@:][A-Za-z0-9_@:.\\-]*$" }, message: 'must match pattern "^[A-Za-z0-9_@:][A-Za-z0-9_@:.\\-]*$"' }];
                      return false;
                    }
                  }
                }
              } else {
                validate77.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.lines !== void 0) {
              let data1 = data.lines;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate77.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 1e3 || isNaN(data1)) {
                    validate77.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/maximum", keyword: "maximum", params: { comparison: "<=", limit: 1e3 }, message: "must be <= 1000" }];
                    return false;
                  } else {
                    if (data1 < 1 || isNaN(data1)) {
                      validate77.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate77.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate77.errors = vErrors;
  return errors === 0;
}
var validateJournalTailOutput = validate78;
function validate78(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate78.evaluated || (validate78.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.unit === void 0 && (missing0 = "unit") || data.entries === void 0 && (missing0 = "entries") || data.truncated === void 0 && (missing0 = "truncated")) {
        validate78.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "unit" || key0 === "entries" || key0 === "truncated")) {
            validate78.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.unit !== void 0) {
            const _errs2 = errors;
            if (typeof data.unit !== "string") {
              validate78.errors = [{ instancePath: instancePath + "/unit", schemaPath: "#/properties/unit/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.entries !== void 0) {
              let data1 = data.entries;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (Array.isArray(data1)) {
                  if (data1.length > 1e3) {
                    validate78.errors = [{ instancePath: instancePath + "/entries", schemaPath: "#/properties/entries/maxItems", keyword: "maxItems", params: { limit: 1e3 }, message: "must NOT have more than 1000 items" }];
                    return false;
                  } else {
                    var valid1 = true;
                    const len0 = data1.length;
                    for (let i0 = 0; i0 < len0; i0++) {
                      let data2 = data1[i0];
                      const _errs6 = errors;
                      if (errors === _errs6) {
                        if (data2 && typeof data2 == "object" && !Array.isArray(data2)) {
                          let missing1;
                          if (data2.ts === void 0 && (missing1 = "ts") || data2.message === void 0 && (missing1 = "message")) {
                            validate78.errors = [{ instancePath: instancePath + "/entries/" + i0, schemaPath: "#/properties/entries/items/required", keyword: "required", params: { missingProperty: missing1 }, message: "must have required property '" + missing1 + "'" }];
                            return false;
                          } else {
                            const _errs8 = errors;
                            for (const key1 in data2) {
                              if (!(key1 === "ts" || key1 === "message" || key1 === "priority" || key1 === "identifier" || key1 === "pid")) {
                                validate78.errors = [{ instancePath: instancePath + "/entries/" + i0, schemaPath: "#/properties/entries/items/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key1 }, message: "must NOT have additional properties" }];
                                return false;
                                break;
                              }
                            }
                            if (_errs8 === errors) {
                              if (data2.ts !== void 0) {
                                let data3 = data2.ts;
                                const _errs9 = errors;
                                if (errors === _errs9) {
                                  if (errors === _errs9) {
                                    if (typeof data3 === "string") {
                                      if (!formats0.validate(data3)) {
                                        validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/ts", schemaPath: "#/properties/entries/items/properties/ts/format", keyword: "format", params: { format: "date-time" }, message: 'must match format "date-time"' }];
                                        return false;
                                      }
                                    } else {
                                      validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/ts", schemaPath: "#/properties/entries/items/properties/ts/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                      return false;
                                    }
                                  }
                                }
                                var valid2 = _errs9 === errors;
                              } else {
                                var valid2 = true;
                              }
                              if (valid2) {
                                if (data2.message !== void 0) {
                                  let data4 = data2.message;
                                  const _errs11 = errors;
                                  if (errors === _errs11) {
                                    if (typeof data4 === "string") {
                                      if (func1(data4) > 65536) {
                                        validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/message", schemaPath: "#/properties/entries/items/properties/message/maxLength", keyword: "maxLength", params: { limit: 65536 }, message: "must NOT have more than 65536 characters" }];
                                        return false;
                                      }
                                    } else {
                                      validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/message", schemaPath: "#/properties/entries/items/properties/message/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                      return false;
                                    }
                                  }
                                  var valid2 = _errs11 === errors;
                                } else {
                                  var valid2 = true;
                                }
                                if (valid2) {
                                  if (data2.priority !== void 0) {
                                    let data5 = data2.priority;
                                    const _errs13 = errors;
                                    if (!(typeof data5 == "number" && (!(data5 % 1) && !isNaN(data5)) && isFinite(data5))) {
                                      validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/priority", schemaPath: "#/properties/entries/items/properties/priority/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                      return false;
                                    }
                                    if (errors === _errs13) {
                                      if (typeof data5 == "number" && isFinite(data5)) {
                                        if (data5 > 7 || isNaN(data5)) {
                                          validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/priority", schemaPath: "#/properties/entries/items/properties/priority/maximum", keyword: "maximum", params: { comparison: "<=", limit: 7 }, message: "must be <= 7" }];
                                          return false;
                                        } else {
                                          if (data5 < 0 || isNaN(data5)) {
                                            validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/priority", schemaPath: "#/properties/entries/items/properties/priority/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                                            return false;
                                          }
                                        }
                                      }
                                    }
                                    var valid2 = _errs13 === errors;
                                  } else {
                                    var valid2 = true;
                                  }
                                  if (valid2) {
                                    if (data2.identifier !== void 0) {
                                      const _errs15 = errors;
                                      if (typeof data2.identifier !== "string") {
                                        validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/identifier", schemaPath: "#/properties/entries/items/properties/identifier/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                                        return false;
                                      }
                                      var valid2 = _errs15 === errors;
                                    } else {
                                      var valid2 = true;
                                    }
                                    if (valid2) {
                                      if (data2.pid !== void 0) {
                                        let data7 = data2.pid;
                                        const _errs17 = errors;
                                        if (!(typeof data7 == "number" && (!(data7 % 1) && !isNaN(data7)) && isFinite(data7))) {
                                          validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/pid", schemaPath: "#/properties/entries/items/properties/pid/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                                          return false;
                                        }
                                        if (errors === _errs17) {
                                          if (typeof data7 == "number" && isFinite(data7)) {
                                            if (data7 < 1 || isNaN(data7)) {
                                              validate78.errors = [{ instancePath: instancePath + "/entries/" + i0 + "/pid", schemaPath: "#/properties/entries/items/properties/pid/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                                              return false;
                                            }
                                          }
                                        }
                                        var valid2 = _errs17 === errors;
                                      } else {
                                        var valid2 = true;
                                      }
                                    }
                                  }
                                }
                              }
                            }
                          }
                        } else {
                          validate78.errors = [{ instancePath: instancePath + "/entries/" + i0, schemaPath: "#/properties/entries/items/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
                          return false;
                        }
                      }
                      var valid1 = _errs6 === errors;
                      if (!valid1) {
                        break;
                      }
                    }
                  }
                } else {
                  validate78.errors = [{ instancePath: instancePath + "/entries", schemaPath: "#/properties/entries/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                  return false;
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.truncated !== void 0) {
                const _errs19 = errors;
                if (typeof data.truncated !== "boolean") {
                  validate78.errors = [{ instancePath: instancePath + "/truncated", schemaPath: "#/properties/truncated/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean" }];
                  return false;
                }
                var valid0 = _errs19 === errors;
              } else {
                var valid0 = true;
              }
            }
          }
        }
      }
    } else {
      validate78.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate78.errors = vErrors;
  return errors === 0;
}
var validateFileTailArgs = validate79;
function validate79(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate79.evaluated || (validate79.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.path === void 0 && (missing0 = "path")) {
        validate79.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "path" || key0 === "lines")) {
            validate79.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.path !== void 0) {
            let data0 = data.path;
            const _errs2 = errors;
            if (errors === _errs2) {
              if (typeof data0 === "string") {
                if (func1(data0) > 4096) {
                  validate79.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/maxLength", keyword: "maxLength", params: { limit: 4096 }, message: "must NOT have more than 4096 characters" }];
                  return false;
                } else {
                  if (func1(data0) < 1) {
                    validate79.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/minLength", keyword: "minLength", params: { limit: 1 }, message: "must NOT have fewer than 1 characters" }];
                    return false;
                  } else {
                    if (!pattern12.test(data0)) {
                      validate79.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/pattern", keyword: "pattern", params: { pattern: "^(?![\\s\\S]*(?:^|/)\\.\\.(?:/|$))/[^\\u0000]*$" }, message: 'must match pattern "^(?![\\s\\S]*(?:^|/)\\.\\.(?:/|$))/[^\\u0000]*$"' }];
                      return false;
                    }
                  }
                }
              } else {
                validate79.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                return false;
              }
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.lines !== void 0) {
              let data1 = data.lines;
              const _errs4 = errors;
              if (!(typeof data1 == "number" && (!(data1 % 1) && !isNaN(data1)) && isFinite(data1))) {
                validate79.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                return false;
              }
              if (errors === _errs4) {
                if (typeof data1 == "number" && isFinite(data1)) {
                  if (data1 > 1e3 || isNaN(data1)) {
                    validate79.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/maximum", keyword: "maximum", params: { comparison: "<=", limit: 1e3 }, message: "must be <= 1000" }];
                    return false;
                  } else {
                    if (data1 < 1 || isNaN(data1)) {
                      validate79.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/minimum", keyword: "minimum", params: { comparison: ">=", limit: 1 }, message: "must be >= 1" }];
                      return false;
                    }
                  }
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
          }
        }
      }
    } else {
      validate79.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate79.errors = vErrors;
  return errors === 0;
}
var validateFileTailOutput = validate80;
function validate80(data, { instancePath = "", parentData, parentDataProperty, rootData = data, dynamicAnchors = {} } = {}) {
  ;
  let vErrors = null;
  let errors = 0;
  const evaluated0 = validate80.evaluated || (validate80.evaluated = { "props": true, "dynamicProps": false, "dynamicItems": false });
  if (evaluated0.dynamicProps) {
    evaluated0.props = void 0;
  }
  if (evaluated0.dynamicItems) {
    evaluated0.items = void 0;
  }
  if (errors === 0) {
    if (data && typeof data == "object" && !Array.isArray(data)) {
      let missing0;
      if (data.path === void 0 && (missing0 = "path") || data.lines === void 0 && (missing0 = "lines") || data.truncated === void 0 && (missing0 = "truncated")) {
        validate80.errors = [{ instancePath, schemaPath: "#/required", keyword: "required", params: { missingProperty: missing0 }, message: "must have required property '" + missing0 + "'" }];
        return false;
      } else {
        const _errs1 = errors;
        for (const key0 in data) {
          if (!(key0 === "path" || key0 === "lines" || key0 === "truncated" || key0 === "size_bytes")) {
            validate80.errors = [{ instancePath, schemaPath: "#/additionalProperties", keyword: "additionalProperties", params: { additionalProperty: key0 }, message: "must NOT have additional properties" }];
            return false;
            break;
          }
        }
        if (_errs1 === errors) {
          if (data.path !== void 0) {
            const _errs2 = errors;
            if (typeof data.path !== "string") {
              validate80.errors = [{ instancePath: instancePath + "/path", schemaPath: "#/properties/path/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
              return false;
            }
            var valid0 = _errs2 === errors;
          } else {
            var valid0 = true;
          }
          if (valid0) {
            if (data.lines !== void 0) {
              let data1 = data.lines;
              const _errs4 = errors;
              if (errors === _errs4) {
                if (Array.isArray(data1)) {
                  if (data1.length > 1e3) {
                    validate80.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/maxItems", keyword: "maxItems", params: { limit: 1e3 }, message: "must NOT have more than 1000 items" }];
                    return false;
                  } else {
                    var valid1 = true;
                    const len0 = data1.length;
                    for (let i0 = 0; i0 < len0; i0++) {
                      let data2 = data1[i0];
                      const _errs6 = errors;
                      if (errors === _errs6) {
                        if (typeof data2 === "string") {
                          if (func1(data2) > 65536) {
                            validate80.errors = [{ instancePath: instancePath + "/lines/" + i0, schemaPath: "#/properties/lines/items/maxLength", keyword: "maxLength", params: { limit: 65536 }, message: "must NOT have more than 65536 characters" }];
                            return false;
                          }
                        } else {
                          validate80.errors = [{ instancePath: instancePath + "/lines/" + i0, schemaPath: "#/properties/lines/items/type", keyword: "type", params: { type: "string" }, message: "must be string" }];
                          return false;
                        }
                      }
                      var valid1 = _errs6 === errors;
                      if (!valid1) {
                        break;
                      }
                    }
                  }
                } else {
                  validate80.errors = [{ instancePath: instancePath + "/lines", schemaPath: "#/properties/lines/type", keyword: "type", params: { type: "array" }, message: "must be array" }];
                  return false;
                }
              }
              var valid0 = _errs4 === errors;
            } else {
              var valid0 = true;
            }
            if (valid0) {
              if (data.truncated !== void 0) {
                const _errs8 = errors;
                if (typeof data.truncated !== "boolean") {
                  validate80.errors = [{ instancePath: instancePath + "/truncated", schemaPath: "#/properties/truncated/type", keyword: "type", params: { type: "boolean" }, message: "must be boolean" }];
                  return false;
                }
                var valid0 = _errs8 === errors;
              } else {
                var valid0 = true;
              }
              if (valid0) {
                if (data.size_bytes !== void 0) {
                  let data4 = data.size_bytes;
                  const _errs10 = errors;
                  if (!(typeof data4 == "number" && (!(data4 % 1) && !isNaN(data4)) && isFinite(data4))) {
                    validate80.errors = [{ instancePath: instancePath + "/size_bytes", schemaPath: "#/properties/size_bytes/type", keyword: "type", params: { type: "integer" }, message: "must be integer" }];
                    return false;
                  }
                  if (errors === _errs10) {
                    if (typeof data4 == "number" && isFinite(data4)) {
                      if (data4 < 0 || isNaN(data4)) {
                        validate80.errors = [{ instancePath: instancePath + "/size_bytes", schemaPath: "#/properties/size_bytes/minimum", keyword: "minimum", params: { comparison: ">=", limit: 0 }, message: "must be >= 0" }];
                        return false;
                      }
                    }
                  }
                  var valid0 = _errs10 === errors;
                } else {
                  var valid0 = true;
                }
              }
            }
          }
        }
      }
    } else {
      validate80.errors = [{ instancePath, schemaPath: "#/type", keyword: "type", params: { type: "object" }, message: "must be object" }];
      return false;
    }
  }
  validate80.errors = vErrors;
  return errors === 0;
}
var fastFormatDateTime = /* @__PURE__ */ require_formats().fullFormats["date-time"];
var fastUcs2length = /* @__PURE__ */ require_ucs2length().default;
var FAST_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function fastD2(s, i) {
  const a = s.charCodeAt(i) - 48, b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}
function fastDateTime(s) {
  const n = s.length;
  if (n < 20 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return false;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116) return false;
  const y1 = fastD2(s, 0), y2 = fastD2(s, 2), mo = fastD2(s, 5), da = fastD2(s, 8);
  const hr = fastD2(s, 11), mi = fastD2(s, 14), se = fastD2(s, 17);
  if (y1 < 0 || y2 < 0 || mo < 1 || mo > 12 || da < 1 || hr < 0 || hr > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) return false;
  const y = y1 * 100 + y2;
  if (da > (mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : FAST_DAYS[mo])) return false;
  let i = 19;
  if (s.charCodeAt(i) === 46) {
    i++;
    const f = i;
    for (let c = s.charCodeAt(i); c >= 48 && c <= 57; c = s.charCodeAt(++i)) ;
    if (i === f) return false;
  }
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === n;
  if (z !== 43 && z !== 45 || i + 6 !== n || s.charCodeAt(i + 3) !== 58) return false;
  const th = fastD2(s, i + 1), tm = fastD2(s, i + 4);
  return th >= 0 && th <= 23 && tm >= 0 && tm <= 59;
}
function fast5(d) {
  if (!(typeof d === "string")) return false;
  if (!(d === "emerg" || d === "alert" || d === "crit" || d === "err" || d === "warning" || d === "notice" || d === "info" || d === "debug")) return false;
  return true;
}
function fast12(d) {
  if (!(typeof d === "string")) return false;
  if (!(d === "journald")) return false;
  return true;
}
var fastRe14 = /* @__PURE__ */ new RegExp("^file:.+$", "u");
function fast13(d) {
  if (!(typeof d === "string")) return false;
  if (!fastRe14.test(d)) return false;
  return true;
}
var fastRe16 = /* @__PURE__ */ new RegExp("^docker:.+$", "u");
function fast15(d) {
  if (!(typeof d === "string")) return false;
  if (!fastRe16.test(d)) return false;
  return true;
}
var fastRe18 = /* @__PURE__ */ new RegExp("^custom:.+$", "u");
function fast17(d) {
  if (!(typeof d === "string")) return false;
  if (!fastRe18.test(d)) return false;
  return true;
}
function fast11(d) {
  if (typeof d !== "string") return false;
  if (d.startsWith("journald")) {
    if (!fast12(d)) return false;
  } else if (d.startsWith("file:")) {
    if (!fast13(d)) return false;
  } else if (d.startsWith("docker:")) {
    if (!fast15(d)) return false;
  } else if (d.startsWith("custom:")) {
    if (!fast17(d)) return false;
  } else return false;
  return true;
}
function fast0(d) {
  if (!(d !== null && typeof d === "object" && !Array.isArray(d))) return false;
  if (d["seq"] === void 0 || d["ts"] === void 0 || d["severity"] === void 0 || d["message"] === void 0 || d["source"] === void 0) return false;
  for (const k1 in d) {
    if (!(k1 === "seq" || k1 === "ts" || k1 === "severity" || k1 === "facility" || k1 === "app_name" || k1 === "process_id" || k1 === "message" || k1 === "source" || k1 === "metadata")) return false;
  }
  const p2 = d["seq"];
  if (p2 !== void 0) {
    if (!(typeof p2 === "number" && !(p2 % 1) && !isNaN(p2) && isFinite(p2))) return false;
    if (!(p2 >= 0)) return false;
  }
  const p3 = d["ts"];
  if (p3 !== void 0) {
    if (!(typeof p3 === "string")) return false;
    if (!fastDateTime(p3) && !fastFormatDateTime.validate(p3)) return false;
  }
  const p4 = d["severity"];
  if (p4 !== void 0) {
    if (!fast5(p4)) return false;
  }
  const p6 = d["facility"];
  if (p6 !== void 0) {
    if (!(typeof p6 === "string" || p6 === null)) return false;
  }
  const p7 = d["app_name"];
  if (p7 !== void 0) {
    if (!(typeof p7 === "string" || p7 === null)) return false;
  }
  const p8 = d["process_id"];
  if (p8 !== void 0) {
    if (!(typeof p8 === "string" || p8 === null)) return false;
  }
  const p9 = d["message"];
  if (p9 !== void 0) {
    if (!(typeof p9 === "string")) return false;
    if (p9.length > 65536 && fastUcs2length(p9) > 65536) return false;
  }
  const p10 = d["source"];
  if (p10 !== void 0) {
    if (!fast11(p10)) return false;
  }
  const p19 = d["metadata"];
  if (p19 !== void 0) {
    if (!(p19 !== null && typeof p19 === "object" && !Array.isArray(p19) || p19 === null)) return false;
  }
  return true;
}
function fast20(d) {
  if (!(d !== null && typeof d === "object" && !Array.isArray(d))) return false;
  if (d["seq_start"] === void 0 || d["entries"] === void 0) return false;
  for (const k21 in d) {
    if (!(k21 === "seq_start" || k21 === "entries")) return false;
  }
  const p22 = d["seq_start"];
  if (p22 !== void 0) {
    if (!(typeof p22 === "number" && !(p22 % 1) && !isNaN(p22) && isFinite(p22))) return false;
    if (!(p22 >= 0)) return false;
  }
  const p23 = d["entries"];
  if (p23 !== void 0) {
    if (!Array.isArray(p23)) return false;
    if (p23.length > 1e3) return false;
    if (p23.length < 1) return false;
    for (let i24 = 0, i24n = p23.length; i24 < i24n; i24++) {
      const e25 = p23[i24];
      if (!fast0(e25)) return false;
    }
  }
  return true;
}
function validateLogBatchEntry(data, dataCxt) {
  if (fast0(data)) {
    validateLogBatchEntry.errors = null;
    return true;
  }
  const valid = validateLogBatchEntryAjv(data, dataCxt);
  validateLogBatchEntry.errors = validateLogBatchEntryAjv.errors;
  return valid;
}
function validateLogsPushParams(data, dataCxt) {
  if (fast20(data)) {
    validateLogsPushParams.errors = null;
    return true;
  }
  const valid = validateLogsPushParamsAjv(data, dataCxt);
  validateLogsPushParams.errors = validateLogsPushParamsAjv.errors;
  return valid;
}
export {
  validateAgentConfig,
  validateAgentHeartbeatParams,
  validateAgentHelloParams,
  validateAgentHelloResult,
  validateAgentShutdownParams,
  validateAgentVersionUnsupportedData,
  validateAuthFailedData,
  validateBufferOverflowData,
  validateConfigUpdateParams,
  validateExecSystemctlStatusArgs,
  validateExecSystemctlStatusOutput,
  validateFileTailArgs,
  validateFileTailOutput,
  validateFsDiskUsageArgs,
  validateFsDiskUsageOutput,
  validateInvalidParamsData,
  validateJournalTailArgs,
  validateJournalTailOutput,
  validateJsonRpcErrorObject,
  validateJsonRpcErrorResponse,
  validateJsonRpcId,
  validateJsonRpcMessage,
  validateJsonRpcNotification,
  validateJsonRpcRequest,
  validateJsonRpcSuccessResponse,
  validateLogBatchEntry,
  validateLogSource,
  validateLogsPushParams,
  validateLogsPushResult,
  validateMetricSample,
  validateMetricsPushParams,
  validateMetricsPushResult,
  validateNetListeningSocketsArgs,
  validateNetListeningSocketsOutput,
  validatePayloadTooLargeData,
  validateProbeExecutionFailedData,
  validateProbeOutput,
  validateProbeRequestParams,
  validateProbeRequestResult,
  validateProbeTimeoutData,
  validateProbeUnavailableData,
  validateProcTopArgs,
  validateProcTopOutput,
  validateRetryAfterData,
  validateSeverity,
  validateSysOsReleaseArgs,
  validateSysOsReleaseOutput,
  validateSysUptimeArgs,
  validateSysUptimeOutput,
  validateTokenRevokedData,
  validateTokenRotationRequiredData,
  validateUnknownHostData
};
