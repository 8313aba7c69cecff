import { useMutation } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { controlPlane } from '../api/control-plane';
import { targetsFor, useSessionContext } from '../auth/session';
import { ErrorNotice } from '../components/ui';

/** Sign in with an API token (`pdk_...`): checked with whoami, then kept in this tab's session only. */
export function SignInPage() {
  const { signIn, gatewayUrl } = useSessionContext();
  const [token, setToken] = useState('');
  const id = useId();
  const check = useMutation({
    mutationFn: (t: string) => controlPlane.whoami(targetsFor(t, gatewayUrl).controlPlane),
    onSuccess: (whoami, t) => signIn(t, whoami),
  });
  return (
    <main id="main" className="signin">
      <h1>Paddock console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          check.mutate(token.trim());
        }}
      >
        <label htmlFor={id}>API token</label>
        <input
          id={id}
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder="pdk_…"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
        />
        <p className="hint">
          Kept in this browser tab only (session storage); closing the tab signs you out.{' '}
          <code>pnpm start</code> prints the admin token.
        </p>
        <button type="submit" className="primary" disabled={check.isPending || !token.trim()}>
          {check.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNotice error={check.error} title="Sign-in failed" />
    </main>
  );
}
