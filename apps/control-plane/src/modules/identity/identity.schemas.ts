import { z } from 'zod';
import { ROLES } from './caller';

export const CreateTokenRequestSchema = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(128, 'name must be at most 128 characters'),
  role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` }),
});
export type CreateTokenRequest = z.infer<typeof CreateTokenRequestSchema>;

export const CreateOrganizationRequestSchema = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(128, 'name must be at most 128 characters'),
});

export const UuidSchema = z.string().uuid();
