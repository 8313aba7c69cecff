import { Inject, Injectable } from '@nestjs/common';
import { PaddockError, type ReleaseChannel } from '@paddock/contracts';
import type { Kysely, Selectable } from 'kysely';
import type { CpDatabase } from '../../db/database';
import { Clock, KYSELY } from '../../infrastructure/tokens';
import type { ReleasesTable } from './releases.tables';
import type { PublishReleaseRequest, PublishableChannel, Release } from './releases.schemas';

type ReleaseRow = Selectable<ReleasesTable>;

const toRelease = (row: ReleaseRow): Release => ({
  revision: row.revision,
  channel: row.channel as PublishableChannel,
  version: row.version,
  image: row.image,
  publishTime: row.published_at.toISOString(),
});

/**
 * The runner releases per channel. A revision is global and only grows, so "update available"
 * is simply `latest(channel).revision > targetRevision`.
 */
@Injectable()
export class ReleaseCatalog {
  constructor(
    @Inject(KYSELY) private readonly db: Kysely<CpDatabase>,
    private readonly clock: Clock,
  ) {}

  /** Newest release on a channel; UNSPECIFIED means STABLE (the default channel). */
  async latest(channel: ReleaseChannel | PublishableChannel): Promise<{ revision: number; version: string; image: string }> {
    const ch = channel === 'RELEASE_CHANNEL_UNSPECIFIED' ? 'RELEASE_CHANNEL_STABLE' : channel;
    const row = await this.db
      .selectFrom('cp_releases')
      .select(['revision', 'version', 'image'])
      .where('channel', '=', ch)
      .orderBy('revision', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) throw new PaddockError('failed_precondition', `no release has been published on channel ${ch}`);
    return row;
  }

  async byRevision(revision: number): Promise<Release | undefined> {
    const row = await this.db.selectFrom('cp_releases').selectAll().where('revision', '=', revision).executeTakeFirst();
    return row ? toRelease(row) : undefined;
  }

  async list(channel?: PublishableChannel): Promise<Release[]> {
    let q = this.db.selectFrom('cp_releases').selectAll();
    if (channel) q = q.where('channel', '=', channel);
    return (await q.orderBy('revision', 'desc').execute()).map(toRelease);
  }

  async publish(req: PublishReleaseRequest): Promise<Release> {
    const row = await this.db
      .insertInto('cp_releases')
      .values({ channel: req.channel, version: req.version, image: req.image, published_at: this.clock.now() })
      .onConflict((oc) => oc.constraint('cp_releases_version_per_channel').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      throw new PaddockError('already_exists', `version ${req.version} is already published on ${req.channel}`, {
        violations: [{ field: 'version', rule: 'unique_per_channel', description: `version ${req.version} already exists on ${req.channel}` }],
      });
    }
    return toRelease(row);
  }
}
