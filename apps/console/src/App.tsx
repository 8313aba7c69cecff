import { useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter';
import { useSessionContext } from './auth/session';
import { Badge } from './components/ui';
import { enumLabel } from './lib/format';
import { CreateSandboxPage } from './pages/CreateSandboxPage';
import { RunnerPage } from './pages/RunnerPage';
import { RunnersPage } from './pages/RunnersPage';
import { SandboxPage } from './pages/SandboxPage';
import { SandboxesPage } from './pages/SandboxesPage';
import { SignInPage } from './pages/SignInPage';
import { TokensPage } from './pages/TokensPage';

const BASE = import.meta.env.BASE_URL.replace(/\/$/, '');

function NavLink(props: { href: string; children: ReactNode }) {
  const [location] = useLocation();
  const current = location === props.href || location.startsWith(`${props.href}/`);
  return (
    <Link href={props.href} aria-current={current ? 'page' : undefined} className={current ? 'current' : ''}>
      {props.children}
    </Link>
  );
}

function Shell(props: { children: ReactNode }) {
  const { session, signOut } = useSessionContext();
  const queries = useQueryClient();
  if (!session) return null;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Paddock</span>
        <nav aria-label="Main">
          {session.isAdmin ? <NavLink href="/runners">Runners</NavLink> : null}
          <NavLink href="/sandboxes">Sandboxes</NavLink>
          {session.isAdmin ? <NavLink href="/tokens">Tokens</NavLink> : null}
        </nav>
        <div className="who" aria-label="Signed in as">
          <span className="org" title={`organization ${session.whoami.organization.id}`}>
            {session.whoami.organization.name}
          </span>
          <Badge tone={session.isAdmin ? 'info' : 'muted'}>{enumLabel(session.whoami.role, 'SANDBOX_')}</Badge>
          <button
            type="button"
            onClick={() => {
              queries.clear();
              signOut();
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}

export function App() {
  const { session } = useSessionContext();
  return (
    <Router base={BASE}>
      {!session ? (
        <SignInPage />
      ) : (
        <Shell>
          <Switch>
            <Route path="/runners">{session.isAdmin ? <RunnersPage /> : <AdminOnly />}</Route>
            <Route path="/runners/:id/:tab?">{(p) => (session.isAdmin ? <RunnerPage id={p.id} tab={p.tab ?? 'overview'} /> : <AdminOnly />)}</Route>
            <Route path="/sandboxes" component={SandboxesPage} />
            <Route path="/sandboxes/new" component={CreateSandboxPage} />
            <Route path="/sandboxes/:id/:tab?">{(p) => <SandboxPage id={p.id} tab={p.tab ?? 'overview'} />}</Route>
            <Route path="/tokens">{session.isAdmin ? <TokensPage /> : <AdminOnly />}</Route>
            <Route>
              <Redirect to={session.isAdmin ? '/runners' : '/sandboxes'} />
            </Route>
          </Switch>
        </Shell>
      )}
    </Router>
  );
}

function AdminOnly() {
  return (
    <section>
      <h1>Admins only</h1>
      <p>Runners, policies and tokens need a SANDBOX_ADMIN token. Your token can create and use sandboxes.</p>
      <Link href="/sandboxes">Go to sandboxes</Link>
    </section>
  );
}
