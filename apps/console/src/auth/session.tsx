import type { WhoAmIResponse } from '@paddock/contracts';
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import type { ApiTarget } from '../api/http';

/**
 * The signed-in session: the API token (kept in this tab's sessionStorage only, gone when the tab
 * closes), who the token is, and where both APIs are.
 */
export interface Session {
  token: string;
  whoami: WhoAmIResponse;
  controlPlane: ApiTarget;
  gateway: ApiTarget;
  isAdmin: boolean;
}

const TOKEN_KEY = 'paddock.console.token';

export const storedToken = (): string | null => window.sessionStorage.getItem(TOKEN_KEY);

interface SessionContextValue {
  session: Session | null;
  gatewayUrl: string;
  signIn: (token: string, whoami: WhoAmIResponse) => void;
  signOut: () => void;
}

const SessionContext = createContext<SessionContextValue | null>(null);

export function targetsFor(token: string, gatewayUrl: string): { controlPlane: ApiTarget; gateway: ApiTarget } {
  // The control plane serves this page: its API is same-origin.
  return { controlPlane: { baseUrl: '', token }, gateway: { baseUrl: gatewayUrl, token } };
}

export function SessionProvider(props: { gatewayUrl: string; initial: { token: string; whoami: WhoAmIResponse } | null; children: ReactNode }) {
  const make = useCallback(
    (token: string, whoami: WhoAmIResponse): Session => ({ token, whoami, ...targetsFor(token, props.gatewayUrl), isAdmin: whoami.role === 'SANDBOX_ADMIN' }),
    [props.gatewayUrl],
  );
  const [session, setSession] = useState<Session | null>(() => (props.initial ? make(props.initial.token, props.initial.whoami) : null));
  const value = useMemo<SessionContextValue>(
    () => ({
      session,
      gatewayUrl: props.gatewayUrl,
      signIn(token, whoami) {
        window.sessionStorage.setItem(TOKEN_KEY, token);
        setSession(make(token, whoami));
      },
      signOut() {
        window.sessionStorage.removeItem(TOKEN_KEY);
        setSession(null);
      },
    }),
    [session, props.gatewayUrl, make],
  );
  return <SessionContext.Provider value={value}>{props.children}</SessionContext.Provider>;
}

export function useSessionContext(): SessionContextValue {
  const ctx = useContext(SessionContext);
  if (!ctx) throw new Error('SessionProvider is missing');
  return ctx;
}

/** The session of a signed-in page (routes render only when there is one). */
export function useSession(): Session {
  const s = useSessionContext().session;
  if (!s) throw new Error('not signed in');
  return s;
}
