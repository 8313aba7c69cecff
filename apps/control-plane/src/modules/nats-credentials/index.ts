export { NatsCredentialsModule } from './nats-credentials.module';
