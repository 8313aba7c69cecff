import type { Ctx } from '../context';
import { CliError, EXIT } from '../errors';
import { age, parseOutputFormat, renderTable, toJson, toYaml } from '../output';

interface SecretStore {
  name: string;
  providerType: string;
  secrets: { path: string; createTime: string; updateTime: string }[];
  createTime: string;
  updateTime: string;
}

const PATH = '/v1/settings/secretStores';
const at = (name: string): string => `${PATH}/${encodeURIComponent(name)}`;

export async function createStore(ctx: Ctx, name: string): Promise<void> {
  await ctx.controlPlane().request<SecretStore>(`creating secret store ${name}`, 'POST', PATH, { secretStore: { name } });
  ctx.out(`secretstore/${name} created`);
}

export async function getStores(ctx: Ctx, name: string | undefined, o: { output?: string }): Promise<void> {
  const format = parseOutputFormat(o.output);
  const cp = ctx.controlPlane();
  if (name) {
    const s = await cp.request<SecretStore>(`getting secret store ${name}`, 'GET', at(name));
    if (format === 'json') return ctx.out(toJson(s));
    if (format === 'yaml') return ctx.out(toYaml(s));
    if (format === 'name') return ctx.out(s.secrets.map((x) => `secret/${s.name}/${x.path}`).join('\n'));
    return ctx.out(renderTable(['path', 'updated'], s.secrets.map((x) => [x.path, age(x.updateTime)])));
  }
  const { secretStores } = await cp.request<{ secretStores: SecretStore[] }>('listing secret stores', 'GET', PATH);
  if (format === 'json') return ctx.out(toJson(secretStores));
  if (format === 'yaml') return ctx.out(toYaml(secretStores));
  if (format === 'name') return ctx.out(secretStores.map((s) => `secretstore/${s.name}`).join('\n'));
  ctx.out(renderTable(['name', 'secrets', 'age'], secretStores.map((s) => [s.name, String(s.secrets.length), age(s.createTime)])));
}

/** The value comes from stdin (one trailing newline dropped, as `echo` adds it) or an unechoed prompt. */
export async function setSecret(ctx: Ctx, name: string, path: string): Promise<void> {
  const raw = ctx.io.stdinIsTTY ? await ctx.promptSecret(`value of ${name}/${path}: `) : ctx.io.readStdin();
  const value = raw.endsWith('\n') ? raw.slice(0, raw.endsWith('\r\n') ? -2 : -1) : raw;
  if (!value) throw new CliError('the secret value is empty (pipe it on stdin)', EXIT.usage);
  await ctx.controlPlane().request<SecretStore>(`writing secret ${name}/${path}`, 'PATCH', at(name), { secretStore: { secrets: [{ path, value }] } });
  ctx.out(`secret/${name}/${path} written`);
}

export async function unsetSecret(ctx: Ctx, name: string, path: string): Promise<void> {
  await ctx.controlPlane().request<SecretStore>(`removing secret ${name}/${path}`, 'PATCH', at(name), { secretStore: {}, removeSecrets: [path] });
  ctx.out(`secret/${name}/${path} removed`);
}

export async function deleteStore(ctx: Ctx, name: string, o: { allowMissing?: boolean }): Promise<void> {
  await ctx.controlPlane().request(`deleting secret store ${name}`, 'DELETE', `${at(name)}${o.allowMissing ? '?allowMissing=true' : ''}`);
  ctx.out(`secretstore/${name} deleted`);
}
