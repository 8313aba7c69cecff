import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { PaddockError, type ManagedRunner, type RunnerReleaseRef } from '@paddock/contracts';
import { Clock, IdGenerator } from '../../../infrastructure/tokens';
import { ClustersService } from '../../clusters';
import { ReleaseCatalog } from '../../releases';
import { requestHash } from './canonical-json';
import { eventMetadata } from './event-metadata';
import { CreateManagedRunnerCommand } from './runner.commands';
import { RunnerQueries } from './runner-queries';
import { RunnerWriter } from './runner-writer';

/** Until a release is published on the channel, a runner targets "nothing yet" (revision 0). */
const NO_RELEASE: RunnerReleaseRef = { revision: 0, version: '', image: '' };

@CommandHandler(CreateManagedRunnerCommand)
export class CreateManagedRunnerHandler implements ICommandHandler<CreateManagedRunnerCommand> {
  constructor(
    private readonly writer: RunnerWriter,
    private readonly queries: RunnerQueries,
    private readonly clusters: ClustersService,
    private readonly releases: ReleaseCatalog,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async execute({ caller, input }: CreateManagedRunnerCommand): Promise<ManagedRunner> {
    const org = caller.organizationId;
    const cluster = await this.clusters.resolve(org, input.cluster);
    if (!cluster) {
      const field = input.cluster.clusterId ? 'runner.identity.cluster_id' : 'runner.identity.cluster_name';
      const ref = input.cluster.clusterId ?? input.cluster.clusterName ?? '';
      const description = `${field} "${ref}" does not name a cluster of this organization`;
      throw new PaddockError('invalid_argument', description, {
        reason: 'PADDOCK_VALIDATION_FAILED',
        violations: [{ field, rule: 'existing_cluster', description }],
      });
    }
    let release = NO_RELEASE;
    try {
      release = await this.releases.latest(input.spec.releaseChannel);
    } catch {
      release = NO_RELEASE;
    }
    const now = this.clock.now();
    const uid = this.ids.uuid();
    const { requestId, ...request } = input;
    const created = await this.writer.create(
      uid,
      {
        type: 'CreateRunner',
        data: {
          uid,
          organizationId: org,
          runnerId: input.runnerId,
          zone: input.zone,
          cluster: { id: cluster.id, name: cluster.name },
          runnerGroupId: input.runnerGroupId,
          displayName: input.displayName,
          spec: input.spec,
          policy: input.policy,
          release: { revision: release.revision, version: release.version, image: release.image },
          now,
        },
      },
      eventMetadata(org, caller.actor, now, requestId),
      requestId ? { key: `cp:managed-runner:create:${org}:${requestId}`, requestHash: requestHash(request) } : undefined,
    );
    const view = await this.queries.getByUid(created.uid);
    if (!view) throw new PaddockError('not_found', `managed runner created by request_id ${requestId ?? ''} no longer exists`);
    return view;
  }
}
