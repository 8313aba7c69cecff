import type { LaunchSpec } from '../../sandbox-backend';
import { ImagePullError } from './pull-error';

/**
 * The policy's digest pins for a by-tag image, as a check on what the registry resolved the tag
 * to: the index digest (when the tag names one) or the platform manifest's digest must be pinned.
 * Undefined when the spec carries no pins.
 */
export function digestPinCheck(spec: Pick<LaunchSpec, 'image' | 'imageDigests'>): ((resolved: { digest: string; referenceDigest: string }) => void) | undefined {
  const pins = spec.imageDigests;
  if (!pins || pins.length === 0) return undefined;
  return ({ digest, referenceDigest }) => {
    if (pins.includes(referenceDigest) || pins.includes(digest)) return;
    const got = referenceDigest === digest ? digest : `${referenceDigest} (platform manifest ${digest})`;
    throw new ImagePullError(
      'IMAGE_POLICY_REJECTED',
      `image resolved to ${got}, which is not a digest constraints.image.allowedImages pins for it (pinned: ${pins.join(', ')})`,
    );
  };
}
