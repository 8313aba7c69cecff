import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

export interface CwicConfig {
  token?: string;
  controlPlaneUrl?: string;
  gatewayUrl?: string;
}

export const DEFAULT_CONTROL_PLANE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:8081';

/**
 * `$CWIC_CONFIG`, else `$XDG_CONFIG_HOME/cwic/config.json`, else `~/.config/cwic/config.json`.
 * A relative XDG_CONFIG_HOME is ignored, as the XDG spec requires.
 */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CWIC_CONFIG) return env.CWIC_CONFIG;
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME ?? homedir(), '.config');
  return join(base, 'cwic', 'config.json');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): CwicConfig {
  const p = configPath(env);
  if (!existsSync(p)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(p, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed) : {};
  } catch {
    return {};
  }
}

/** Writes the config with mode 0600: it holds a bearer token. */
export function saveConfig(cfg: CwicConfig, env: NodeJS.ProcessEnv = process.env): string {
  const p = configPath(env);
  mkdirSync(dirname(p), { recursive: true, mode: 0o700 });
  writeFileSync(p, `${JSON.stringify(cfg, null, 2)}\n`, { mode: 0o600 });
  chmodSync(p, 0o600);
  return p;
}

export function deleteConfig(env: NodeJS.ProcessEnv = process.env): boolean {
  const p = configPath(env);
  if (!existsSync(p)) return false;
  rmSync(p);
  return true;
}

/** Flag > environment > config file > default. */
export function effectiveSettings(
  env: NodeJS.ProcessEnv = process.env,
  flags: { controlPlaneUrl?: string; gatewayUrl?: string; token?: string } = {},
): Required<CwicConfig> & { tokenSource: string } {
  const cfg = loadConfig(env);
  const token = flags.token ?? env.PADDOCK_API_KEY ?? cfg.token ?? '';
  return {
    token,
    tokenSource: flags.token ? 'flag' : env.PADDOCK_API_KEY ? 'PADDOCK_API_KEY' : cfg.token ? configPath(env) : 'none',
    controlPlaneUrl: (flags.controlPlaneUrl ?? env.PADDOCK_CONTROL_PLANE_URL ?? cfg.controlPlaneUrl ?? DEFAULT_CONTROL_PLANE_URL).replace(/\/+$/, ''),
    gatewayUrl: (flags.gatewayUrl ?? env.PADDOCK_GATEWAY_URL ?? cfg.gatewayUrl ?? DEFAULT_GATEWAY_URL).replace(/\/+$/, ''),
  };
}
