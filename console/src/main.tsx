// The Cortex operator console: a single page served at /ui/ that talks only to /admin/.
// Routes live in the URL fragment (#/, #/hosts/<id>, #/enroll, #/settings): never a secret.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, del, get, onUnauthorized, post, setCsrf, type SessionState } from './api.js';
import { EnrollPage } from './enroll.js';
import { FleetPage } from './fleet.js';
import { HostPage } from './host.js';
import { SettingsPage } from './settings.js';
import { SignIn } from './signin.js';

type Route = { page: 'fleet' } | { page: 'host'; id: string } | { page: 'enroll' } | { page: 'settings' } | { page: 'missing'; hash: string };

function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, '') || '/';
  if (h === '/' || h.startsWith('/?')) return { page: 'fleet' }; // its filter, sort and page after the ? (fleet.tsx)
  const host = /^\/hosts\/([0-9a-fA-F-]{36})$/.exec(h);
  if (host !== null) return { page: 'host', id: (host[1] as string).toLowerCase() };
  if (h === '/enroll') return { page: 'enroll' };
  if (h === '/settings') return { page: 'settings' };
  return { page: 'missing', hash: h };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = (): void => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

const TITLES: Record<Route['page'], string> = { fleet: 'Fleet', host: 'Host', enroll: 'Enroll a host', settings: 'Server settings', missing: 'Not found' };

function App() {
  const route = useRoute();
  const [session, setSession] = useState<SessionState | undefined>();
  const [bootError, setBootError] = useState<string | undefined>();
  const [signOutError, setSignOutError] = useState<string | undefined>();
  const [signingOut, setSigningOut] = useState(false);

  async function boot(): Promise<void> {
    try {
      let s = await get<SessionState>('/admin/session');
      // Loopback mode: the page signs itself in to get a session and its CSRF token.
      if (s.mode === 'loopback' && s.via !== 'cookie') s = await post<SessionState>('/admin/session', {});
      setCsrf(s.csrf_token);
      setSession(s);
      setBootError(undefined);
    } catch (error) {
      setBootError(error instanceof ApiError ? error.message : String(error));
    }
  }

  useEffect(() => {
    void boot();
    return onUnauthorized(() => setSession((s) => (s === undefined ? s : { ...s, authenticated: false, via: 'none' })));
  }, []);

  useEffect(() => {
    document.title = `${TITLES[route.page]} · Cortex console`;
  }, [route.page]);

  // A new page takes the focus (keyboard and screen-reader users start at its top, not on the
  // link they left by, or on nothing); the first one leaves it where the browser put it.
  const firstRoute = useRef(true);
  useEffect(() => {
    if (firstRoute.current) firstRoute.current = false;
    else document.getElementById('main')?.focus();
  }, [route]);

  if (bootError !== undefined) {
    return (
      <main id="main" class="page" tabIndex={-1}>
        <h1>Cortex console</h1>
        <p role="alert" class="error">{bootError}</p>
        <button type="button" onClick={() => void boot()}>Try again</button>
      </main>
    );
  }
  if (session === undefined) return <p class="boot">Loading…</p>;
  if (!session.authenticated) {
    return (
      <SignIn
        mode={session.mode}
        onSignedIn={(s) => {
          setCsrf(s.csrf_token);
          setSession(s);
        }}
      />
    );
  }

  /**
   * Sign-out ends the session on the server (DECISIONS J14). When the server refuses (its
   * database did not record it: 500, 503), the session is still good there and its cookie
   * still here: the page stays signed in and says so, with the server's message and a retry,
   * rather than showing the sign-in page over a session that goes on.
   */
  async function signOut(): Promise<void> {
    setSigningOut(true);
    setSignOutError(undefined);
    try {
      await del('/admin/session');
    } catch (error) {
      setSignOutError(error instanceof ApiError ? error.message : String(error));
      return;
    } finally {
      setSigningOut(false);
    }
    setCsrf(undefined);
    if (session?.mode === 'token') setSession({ authenticated: false, mode: 'token', via: 'none' });
    else void boot();
  }

  return (
    <>
      <header class="top">
        <a class="brand" href="#/">Cortex console</a>
        <nav aria-label="Main">
          <a href="#/" aria-current={route.page === 'fleet' || route.page === 'host' ? 'page' : undefined}>Fleet</a>
          <a href="#/enroll" aria-current={route.page === 'enroll' ? 'page' : undefined}>Enroll a host</a>
          <a href="#/settings" aria-current={route.page === 'settings' ? 'page' : undefined}>Settings</a>
        </nav>
        <span class="who">{session.mode === 'token' ? 'signed in' : 'loopback access'}</span>
        {session.mode === 'token' ? (
          <button type="button" class="link" disabled={signingOut} onClick={() => void signOut()}>{signingOut ? 'Signing out…' : 'Sign out'}</button>
        ) : null}
      </header>
      {signOutError !== undefined && (
        <div class="banner error-banner" role="alert">
          <p>
            <strong>Not signed out: you are still signed in.</strong> The server did not end the session: {signOutError}
          </p>
          <div class="buttons">
            <button type="button" disabled={signingOut} onClick={() => void signOut()}>Try signing out again</button>
            <button type="button" class="link" onClick={() => setSignOutError(undefined)}>Dismiss</button>
          </div>
        </div>
      )}
      <main id="main" class="page" tabIndex={-1}>
        {route.page === 'fleet' && <FleetPage />}
        {route.page === 'host' && <HostPage key={route.id} hostId={route.id} />}
        {route.page === 'enroll' && <EnrollPage />}
        {route.page === 'settings' && <SettingsPage />}
        {route.page === 'missing' && (
          <>
            <h1>Not found</h1>
            <p>
              No page at <code>{route.hash}</code>. <a href="#/">Back to the fleet</a>.
            </p>
          </>
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);

// "Skip to content" (index.html) links to #main, which the router read as a page: it showed "Not
// found" in place of the page, and what it held (a token shown once, a form) was gone. It moves
// the focus to the page's content instead, and the URL stays.
document.querySelector('a.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main')?.focus();
});
