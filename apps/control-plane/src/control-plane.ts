import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { Kysely } from 'kysely';
import { AppModule, type AppModuleOptions } from './app.module';
import { ensureDatabaseExists } from './db/create-database';
import type { CpDatabase } from './db/database';
import { migrateControlPlane } from './db/migrations';
import { installConsoleAssets } from './infrastructure/http/console-assets';
import { BODY_LIMIT_BYTES } from './infrastructure/http/error.filter';
import { requestIdFor } from '@paddock/kit';
import { installHttpHooks } from './infrastructure/http/http-hooks';
import { installJsonBodyParser } from './infrastructure/http/json-body';
import { createLogger, type LogSink } from './infrastructure/logger';
import { KYSELY } from './infrastructure/tokens';
import { Metrics } from './modules/health/metrics';
import { OpenApiDocument } from './modules/health/openapi-document';
import { TokensService } from './modules/identity/tokens.service';
import { TokenVerifier } from './modules/identity/token-verifier';
import { UpdateManagedRunnerHandler } from './modules/runners/application/update-managed-runner.handler';
import { RunnerQueries } from './modules/runners/application/runner-queries';
import { registerGetFastPath } from './modules/runners/api/get-fast-path';
import { registerUpdateFastPath } from './modules/runners/api/update-fast-path';

export interface ControlPlane {
  app: NestFastifyApplication;
  /** The operator organization, created on first start. */
  operatorOrganizationId: string;
  /** Set only when this start generated the operator's first admin token: show it once. */
  generatedAdminToken?: string;
  migrationsApplied: string[];
}

export function buildOpenApi(app: NestFastifyApplication): OpenAPIObject {
  const cfg = new DocumentBuilder()
    .setTitle('Paddock control plane')
    .setDescription('Managed runners, their policies, clusters, releases and API tokens.')
    .setVersion('v1')
    .addBearerAuth()
    .build();
  return SwaggerModule.createDocument(app, cfg, { operationIdFactory: (_controller: string, method: string) => method });
}

/**
 * Builds a ready-to-listen control plane: creates the database if missing, runs migrations,
 * bootstraps the operator organization, then leaves `app.listen()` to the caller (main or the
 * test harness). Lifecycle hooks (intake subscriptions, schedulers) start on listen/init,
 * i.e. only once the schema exists.
 */
export async function createControlPlane(opts: AppModuleOptions & { logSink?: LogSink }): Promise<ControlPlane> {
  const { config } = opts;
  await ensureDatabaseExists(config.databaseUrl);
  const adapter = new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES, genReqId: requestIdFor, logger: false });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(opts), adapter, {
    logger: createLogger(config.logLevel, opts.logSink),
    abortOnError: false,
    // Body parsing is ours (installJsonBodyParser): empty bodies and forbidden keys get clear answers.
    bodyParser: false,
  });
  try {
    installHttpHooks(app.getHttpAdapter().getInstance(), app.get(Metrics));
    installJsonBodyParser(app.getHttpAdapter().getInstance(), BODY_LIMIT_BYTES);
    registerGetFastPath(app.getHttpAdapter().getInstance(), app.get(TokenVerifier), app.get(RunnerQueries));
    registerUpdateFastPath(app.getHttpAdapter().getInstance(), app.get(TokenVerifier), app.get(UpdateManagedRunnerHandler));
    installConsoleAssets(app.getHttpAdapter().getInstance(), { dir: config.consoleDir, gatewayUrl: config.consoleGatewayUrl });
    const migrationsApplied = await migrateControlPlane(app.get<Kysely<CpDatabase>>(KYSELY));
    const boot = await app.get(TokensService).bootstrapOperator({ bootstrapToken: config.bootstrapToken });
    app.get(OpenApiDocument).set(buildOpenApi(app));
    return {
      app,
      operatorOrganizationId: boot.organizationId,
      ...(boot.generatedToken ? { generatedAdminToken: boot.generatedToken } : {}),
      migrationsApplied,
    };
  } catch (e) {
    await app.close().catch(() => undefined);
    throw e;
  }
}
