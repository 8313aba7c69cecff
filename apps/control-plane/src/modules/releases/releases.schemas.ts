import { z } from 'zod';

/** Channels a release can be published to (UNSPECIFIED is not a channel). */
export const PUBLISHABLE_CHANNELS = ['RELEASE_CHANNEL_STABLE', 'RELEASE_CHANNEL_RAPID'] as const;
export type PublishableChannel = (typeof PUBLISHABLE_CHANNELS)[number];

export const ReleaseChannelQuerySchema = z.enum(PUBLISHABLE_CHANNELS, {
  error: `channel must be one of ${PUBLISHABLE_CHANNELS.join(', ')}`,
});

export const PublishReleaseRequestSchema = z.object({
  channel: ReleaseChannelQuerySchema,
  version: z
    .string({ error: 'version is required' })
    .regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'version must be a semantic version such as 0.4.0'),
  image: z
    .string({ error: 'image is required' })
    .regex(/^\S{1,512}$/, 'image must be an image reference: 1 to 512 characters, no whitespace'),
});
export type PublishReleaseRequest = z.infer<typeof PublishReleaseRequestSchema>;

export interface Release {
  revision: number;
  channel: PublishableChannel;
  version: string;
  image: string;
  publishTime: string;
}
