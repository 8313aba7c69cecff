import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import {
  PROFILE_TEMPLATE_STREAM_TYPE,
  profileTemplateStreamId,
  type ProfileTemplate,
  type ProfileTemplateCreated,
} from '@paddock/contracts';
import { EventStore } from '@paddock/event-store';
import { Clock, IdGenerator } from '../../../infrastructure/tokens';
import { ProfileTemplateRepository } from '../projections/profile-template.repository';
import type { RunnersTables } from '../runners.tables';
import { eventMetadata } from './event-metadata';
import { CreateProfileTemplateCommand } from './runner.commands';

/** Legacy v1beta2: stores a profile template as its first event. */
@CommandHandler(CreateProfileTemplateCommand)
export class CreateProfileTemplateHandler implements ICommandHandler<CreateProfileTemplateCommand> {
  constructor(
    private readonly store: EventStore<RunnersTables>,
    private readonly templates: ProfileTemplateRepository,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async execute({ caller, template }: CreateProfileTemplateCommand): Promise<ProfileTemplate> {
    const id = this.ids.uuid();
    const now = this.clock.now();
    const event: ProfileTemplateCreated = {
      type: 'ProfileTemplateCreated',
      data: { profileTemplateId: id, organizationId: caller.organizationId, template: template, createdAt: now.toISOString() },
    };
    await this.store.transaction(async (trx) => {
      await this.store.append(profileTemplateStreamId(id), PROFILE_TEMPLATE_STREAM_TYPE, [{ ...event, metadata: eventMetadata(caller.organizationId, caller.actor, now) }], {
        expectedVersion: 'no_stream',
        trx,
      });
      await this.templates.insert(trx, caller.organizationId, id, template, now);
    });
    return { ...template, profileTemplateId: id, createTime: now.toISOString() };
  }
}
