/** Why an image could not be made runnable; each becomes the sandbox's FAILED reason. */
export type ImagePullReason = 'IMAGE_NOT_FOUND' | 'IMAGE_PULL_UNAUTHORIZED' | 'IMAGE_DIGEST_MISMATCH' | 'IMAGE_PULL_FAILED' | 'IMAGE_POLICY_REJECTED';

export class ImagePullError extends Error {
  constructor(
    readonly reason: ImagePullReason,
    message: string,
  ) {
    super(message);
    this.name = 'ImagePullError';
  }
}
