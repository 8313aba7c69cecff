export { HealthModule } from './health.module';
export { Metrics } from './metrics';
export { OpenApiDocument } from './openapi-document';
