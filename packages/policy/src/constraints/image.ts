import * as m_compile from '../compile';
import * as m_image from '../image';
import * as m_violations from '../violations';
import { type ConstraintInput } from './check';
import * as m_check from './check';

// Hot-path helpers bound once: transpilers (tsx/esbuild) turn imported names into getter
// calls on every use, which cost ~10% of a resolution. Locals are plain calls.
const { memoStore } = m_compile;
const { imageAllowedByList, imageAllowedByRegistries, pinnedDigestsFor } = m_image;
const { addViolation, join, show } = m_violations;
const { CONSTRAINT } = m_check;

/** Each container's image (named or defaulted) against the policy's registries and images and
 * the runner's available images. */
export function checkImages({ merged, policy: p, caps, sink }: ConstraintInput): void {
  for (const w of merged.all) {
    const image = w.out.image;
    const via = w.specImage ? '' : ' (the platform default image)';
    if (
      p.registries.length &&
      !byRegistries(p.memo.registries, image, p.registries)
    ) {
      addViolation(
        sink,
        join(w.path, 'image'),
        'allowed_registries',
        `image ${show(image)}${via} is not from an allowed registry ${show(p.registries)} (${CONSTRAINT.allowedRegistries})`,
        { requested: image, limit: p.registries, constraint: CONSTRAINT.allowedRegistries },
      );
    }
    const pins =
      p.images.length && !byList(p.memo.images, image, p.images)
        ? pinnedDigestsFor(image, p.images)
        : undefined;
    // A tag of a pinned repository is admitted on condition; the runner checks what it resolves to.
    if (pins && pins.length > 0) w.out.imageDigests = pins;
    else if (pins) {
      addViolation(
        sink,
        join(w.path, 'image'),
        'allowed_images',
        `image ${show(image)}${via} is not in the policy's allowed images ${show(p.images)} (${CONSTRAINT.allowedImages})`,
        { requested: image, limit: p.images, constraint: CONSTRAINT.allowedImages },
      );
    }
    if (caps.images.length && !caps.images.includes(image)) {
      addViolation(
        sink,
        join(w.path, 'image'),
        'runner_capability',
        `image ${show(image)}${via} is not available on the runner (available: ${caps.images.join(', ')})`,
        { requested: image, limit: caps.images },
      );
    }
  }
}

/** Memoized per policy by image reference (a lookup that hits allocates nothing). */
function byRegistries(memo: Map<string, boolean>, image: string, registries: string[]): boolean {
  const hit = memo.get(image);
  return hit !== undefined ? hit : memoStore(memo, image, imageAllowedByRegistries(image, registries));
}

function byList(memo: Map<string, boolean>, image: string, images: string[]): boolean {
  const hit = memo.get(image);
  return hit !== undefined ? hit : memoStore(memo, image, imageAllowedByList(image, images));
}
