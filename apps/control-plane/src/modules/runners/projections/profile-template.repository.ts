import { Inject, Injectable } from '@nestjs/common';
import type { Kysely, Transaction } from 'kysely';
import type { ProfileTemplate, ProfileTemplateInput } from '@paddock/contracts';
import { KYSELY } from '../../../infrastructure/tokens';
import type { RunnersTables } from '../runners.tables';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `cp_profile_templates`, org-scoped on every read. */
@Injectable()
export class ProfileTemplateRepository {
  constructor(@Inject(KYSELY) private readonly db: Kysely<RunnersTables>) {}

  async insert(trx: Transaction<RunnersTables>, organizationId: string, id: string, template: ProfileTemplateInput, at: Date): Promise<void> {
    await trx
      .insertInto('cp_profile_templates')
      .values({ profile_template_id: id, organization_id: organizationId, template: JSON.stringify(template), create_time: at })
      .execute();
  }

  async get(organizationId: string, id: string): Promise<ProfileTemplate | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await this.db
      .selectFrom('cp_profile_templates')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('profile_template_id', '=', id.toLowerCase())
      .executeTakeFirst();
    return row ? { ...(row.template as ProfileTemplateInput), profileTemplateId: row.profile_template_id, createTime: row.create_time.toISOString() } : undefined;
  }

  async list(organizationId: string): Promise<ProfileTemplate[]> {
    const rows = await this.db.selectFrom('cp_profile_templates').selectAll().where('organization_id', '=', organizationId).orderBy('seq').limit(1000).execute();
    return rows.map((row) => ({ ...(row.template as ProfileTemplateInput), profileTemplateId: row.profile_template_id, createTime: row.create_time.toISOString() }));
  }
}
