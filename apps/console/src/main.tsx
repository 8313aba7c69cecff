import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createRoot } from 'react-dom/client';
import { controlPlane } from './api/control-plane';
import { App } from './App';
import { SessionProvider, storedToken, targetsFor } from './auth/session';
import './styles.css';

/** Where the gateway is, as the control plane that serves this page says (`/console/config.json`). */
async function loadConfig(): Promise<{ gatewayUrl: string }> {
  const res = await fetch(`${import.meta.env.BASE_URL}config.json`);
  const json = (await res.json()) as { gatewayUrl?: unknown };
  return { gatewayUrl: typeof json.gatewayUrl === 'string' ? json.gatewayUrl : '' };
}

async function boot(): Promise<void> {
  const { gatewayUrl } = await loadConfig();
  // A token saved earlier in this tab: keep the session only if it still works.
  const token = storedToken();
  let initial = null;
  if (token) {
    initial = await controlPlane.whoami(targetsFor(token, gatewayUrl).controlPlane).then(
      (whoami) => ({ token, whoami }),
      () => null,
    );
  }
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });
  const root = document.getElementById('root');
  if (!root) return;
  createRoot(root).render(
    <QueryClientProvider client={queries}>
      <SessionProvider gatewayUrl={gatewayUrl} initial={initial}>
        <App />
      </SessionProvider>
    </QueryClientProvider>,
  );
}

void boot();
