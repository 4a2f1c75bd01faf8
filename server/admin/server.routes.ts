// /admin/openapi.json, /admin/session (console sign-in), /admin/settings, /admin/probes and
// the probe call itself (DESIGN.md section 3).
import { PROBES, describeIssues, toIssues, validateProbeRequestParams } from '@cortex/agent-protocol';
import { redactDbUrl } from '../db/open.js';
import { getSettings } from '../db/settings.repository.js';
import { ProbeFailure } from '../control/probes.js';
import type { Route } from './context.js';
import { ApiError, hostIdParam, invalid, readJson, send, sqliteLockCode } from './http.js';
import { OPENAPI, checkBody } from './schemas.js';
import { SESSION_TTL_MS, readCookies, sessionCookie, sessionCookieName } from './session.js';
import { endSession } from '../db/sessions.repository.js';
import { outageKind } from '../db/outage.js';
import { clientUsesTls, forwarded } from '../security/forwarded.js';
import { authorizeLive, keysFor, signIn } from './access.js';

/** Default timeout_ms when a probe body leaves it out. */
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

/** The probe registry with its schemas (GET /admin/probes), from the generated package's data: no file is read, so a bundled server (the tarball) answers too. */
const PROBE_CATALOG: readonly unknown[] = PROBES.map((p) => ({ name: p.name, summary: p.summary, args_schema: p.argsSchema, output_schema: p.outputSchema }));

function modeOf(adminToken: string | undefined): 'token' | 'loopback' {
  return adminToken !== undefined && adminToken !== '' ? 'token' : 'loopback';
}

export const serverRoutes: Route[] = [
  {
    method: 'GET',
    path: '/admin/openapi.json',
    async handler(ctx) {
      send(ctx.res, 200, OPENAPI);
    },
  },
  {
    method: 'GET',
    path: '/admin/session',
    public: true,
    async handler(ctx) {
      const mode = modeOf(ctx.deps.adminToken);
      const access = await authorizeLive(ctx.req, ctx.deps, false);
      if (!access.ok) {
        send(ctx.res, 200, { authenticated: false, mode, via: 'none' });
        return;
      }
      send(ctx.res, 200, { authenticated: true, mode, via: access.via, ...(access.session ? { csrf_token: access.session.csrfToken } : {}) });
    },
  },
  {
    method: 'POST',
    path: '/admin/session',
    public: true,
    async handler(ctx) {
      const body = checkBody<{ token?: string }>('SignInRequest', (await readJson(ctx.req, '{"token": "<admin token>"}', true)) ?? {});
      signIn(ctx.req, ctx.deps, body.token);
      const { cookie, session } = keysFor(ctx.deps.adminToken).issue();
      send(
        ctx.res,
        200,
        { authenticated: true, mode: modeOf(ctx.deps.adminToken), via: 'cookie', csrf_token: session.csrfToken },
        {
          'Set-Cookie': sessionCookie(
            cookie,
            clientUsesTls(ctx.req, ctx.deps.tls === true, ctx.deps.isTrustedProxy),
            Math.floor(SESSION_TTL_MS / 1000),
            forwarded(ctx.req, ctx.deps.isTrustedProxy)?.prefix,
            sessionCookieName(ctx.req, ctx.deps.adminToken),
          ),
        },
      );
    },
  },
  {
    method: 'DELETE',
    path: '/admin/session',
    public: true,
    async handler(ctx) {
      // Sign-out ends the session on the server (DECISIONS J14), for every server of the
      // database: a copy of the cookie is refused from now on, as an expired one. Only a cookie
      // this server's key signed and not expired is listed (no one ends a session they do not
      // hold). When the database cannot take the row the error answers (nothing is cleared),
      // rather than a sign-out that would leave copies of the cookie valid.
      const keys = keysFor(ctx.deps.adminToken);
      const now = ctx.deps.now?.() ?? new Date();
      const name = sessionCookieName(ctx.req, ctx.deps.adminToken);
      const live = readCookies(ctx.req, name).flatMap((value) => keys.verify(value) ?? []);
      try {
        for (const s of live) await endSession(ctx.deps.storage.db, s.nonce, new Date(s.expiresAt).toISOString(), now);
      } catch (error) {
        // the database away or refusing writes: httpHandler's 503 (it counts the outage); locked
        // by another process: handleAdmin's 503, as on every admin route
        if (outageKind(error) !== undefined || sqliteLockCode(error) !== undefined) throw error;
        ctx.deps.logger?.error({ err: String(error) }, 'console sign-out failed: the database did not record the end of the session');
        throw new ApiError(
          500,
          500,
          'sign-out failed: the database did not record that this session ended, so nothing was cleared and you are still signed in; try again, and if it fails again the server log says why ("console sign-out failed")',
        );
      }
      if (live.length > 0) ctx.deps.logger?.info({ sessions_ended: live.length }, 'console sign-out: session ended on every server of this database');
      const secure = clientUsesTls(ctx.req, ctx.deps.tls === true, ctx.deps.isTrustedProxy);
      const prefix = forwarded(ctx.req, ctx.deps.isTrustedProxy)?.prefix ?? '';
      // Under a prefix, the cookie of a sign-in made before the cookie was scoped to it (Path=/) is cleared too.
      const cleared = prefix === '' ? [sessionCookie('', secure, 0, '', name)] : [sessionCookie('', secure, 0, prefix, name), sessionCookie('', secure, 0, '', name)];
      send(ctx.res, 200, { authenticated: false, mode: modeOf(ctx.deps.adminToken), via: 'none' }, { 'Set-Cookie': cleared });
    },
  },
  {
    method: 'GET',
    path: '/admin/settings',
    async handler(ctx) {
      const s = ctx.deps.settings;
      const base: Record<string, unknown> = s !== undefined ? { ...s, listen: `${s.listen.host.includes(':') ? `[${s.listen.host}]` : s.listen.host}:${s.listen.port}` } : await getSettings(ctx.deps.storage.db);
      const { admin_token, ...rest } = base;
      // A PostgreSQL URL's password is masked here as in the banner and the log (it was shown
      // as given, to anyone who may read settings: a console session, a loopback client).
      if (typeof rest['db'] === 'string') rest['db'] = redactDbUrl(rest['db']);
      send(ctx.res, 200, {
        ...rest,
        admin_token_set: (typeof admin_token === 'string' && admin_token !== '') || (ctx.deps.adminToken !== undefined && ctx.deps.adminToken !== ''),
        ...(ctx.deps.serverVersion !== undefined ? { server_version: ctx.deps.serverVersion } : {}),
        ...(ctx.deps.wsUrl !== undefined ? { ws_url: ctx.deps.wsUrl } : {}),
      });
    },
  },
  {
    method: 'GET',
    path: '/admin/probes',
    async handler(ctx) {
      send(ctx.res, 200, PROBE_CATALOG);
    },
  },
  {
    method: 'POST',
    path: '/admin/agents/{host_id}/probe',
    async handler(ctx) {
      const host_id = hostIdParam(ctx.params['host_id'] as string);
      const body = await readJson(ctx.req, '{"probe": "name", "args": {...}, "timeout_ms": 5000}');
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalid('body must be a JSON object {"probe", "args", "timeout_ms"}');
      const b = body as Record<string, unknown>;
      const params = { ...b, args: 'args' in b ? b['args'] : {}, timeout_ms: 'timeout_ms' in b ? b['timeout_ms'] : DEFAULT_PROBE_TIMEOUT_MS };
      if (!validateProbeRequestParams(params)) {
        const issues = toIssues(validateProbeRequestParams.errors);
        throw invalid(`invalid probe request: ${describeIssues(issues)}`, issues.slice(0, 20));
      }
      // The probe is the action: a valid request is recorded whatever its host answered, with
      // the outcome's status (a probe of a host not connected included, DECISIONS H9).
      let output: unknown;
      try {
        output = await ctx.deps.router.invoke(host_id, params.probe, params.args, params.timeout_ms);
      } catch (error) {
        if (!(error instanceof ProbeFailure)) throw error;
        await ctx.audit(host_id, { probe: params.probe, status: error.status });
        throw new ApiError(error.status, error.rpc.code, error.rpc.wireMessage, error.rpc.data); // the agent's error as it sent it
      }
      await ctx.audit(host_id, { probe: params.probe, status: 200 });
      send(ctx.res, 200, output);
    },
  },
];
