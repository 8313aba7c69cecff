export { EnvSchema, parseEnv, type Env } from './env';
export { AppConfig } from './app-config';
