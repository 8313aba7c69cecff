import type { Ctx } from '../context';
import { age, parseOutputFormat, renderTable, toJson, toYaml } from '../output';

interface Cluster {
  id: string;
  name: string;
  zone: string;
  createTime?: string;
}

export async function getClusters(ctx: Ctx, o: { output?: string }): Promise<void> {
  const format = parseOutputFormat(o.output);
  const r = await ctx.controlPlane().request<{ clusters: Cluster[] }>('listing clusters', 'GET', '/v1/clusters');
  if (format === 'json') return ctx.out(toJson(r.clusters));
  if (format === 'yaml') return ctx.out(toYaml(r.clusters));
  if (format === 'name') return ctx.out(r.clusters.map((c) => `cluster/${c.name}`).join('\n'));
  ctx.out(renderTable(['id', 'name', 'zone', 'age'], r.clusters.map((c) => [c.id, c.name, c.zone, age(c.createTime)])));
}
