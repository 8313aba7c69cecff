import { Controller, Get, Header, HttpCode, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { GatewayMetrics } from '../observability/metrics';
import { HEALTH, METRICS, type HealthProbe } from './tokens';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    @Inject(HEALTH) private readonly health: HealthProbe,
    @Inject(METRICS) private readonly metrics: GatewayMetrics,
  ) {}

  @Get('healthz')
  @HttpCode(200)
  healthz() {
    return { ok: true };
  }

  @Get('readyz')
  async readyz(@Res() reply: FastifyReply) {
    const r = await this.health.ready();
    return reply.status(r.ok ? 200 : 503).send(r);
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4')
  metricsText() {
    return this.metrics.registry.metrics();
  }
}
