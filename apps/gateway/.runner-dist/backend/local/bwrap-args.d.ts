import type { LaunchSpec } from '../sandbox-backend';
import { type LocalImage } from './options';
/** Where an image's root comes from: the host's /usr (built-in base image) or a rootfs directory. */
export type ImageSource = {
    kind: 'host';
} | {
    kind: 'rootfs';
    path: string;
};
export declare function resolveImage(name: string, images: Record<string, LocalImage>): ImageSource | undefined;
/** bwrap arguments that build the read-only root of an image on top of an empty tmpfs. */
export declare function imageMountArgs(src: ImageSource): string[];
export declare const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
export declare const WORKSPACE = "/workspace";
/** The environment every process of the sandbox starts with (main process and exec). */
export declare function baseEnv(spec: Pick<LaunchSpec, 'sandboxId' | 'env'>): Record<string, string>;
/** What the main process runs: the spec's argv, or an idle keep-alive so the sandbox stays up for exec. */
export declare function mainCommand(spec: Pick<LaunchSpec, 'command'>): string[];
/**
 * The full bwrap argv. fd 3 receives bwrap's info (the namespace init's pid), fd 4 carries the
 * seccomp program. Every namespace is new (network too unless `host`), the user namespace cannot
 * be nested further, no capability is kept, the root is read-only, and /workspace and /tmp are
 * the only writable places (both on the sandbox's size-capped tmpfs).
 */
export declare function bwrapArgs(spec: LaunchSpec, image: ImageSource, diskDir: string): string[];
