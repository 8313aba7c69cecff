import { type Policy } from '@paddock/contracts';
import { z } from 'zod';
/**
 * The runner's config file: in Kubernetes a mounted ConfigMap written by the controller, locally a
 * file written by the controller's local driver. Every field is optional so a runner can start
 * before the controller has written anything (it then applies the platform default policy).
 */
export declare const RunnerConfigFileSchema: z.ZodObject<{
    runnerId: z.ZodOptional<z.ZodString>;
    revision: z.ZodDefault<z.ZodNumber>;
    policy: z.ZodOptional<z.ZodObject<{
        displayName: z.ZodOptional<z.ZodString>;
        base: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
        constraints: z.ZodOptional<z.ZodObject<{
            resources: z.ZodOptional<z.ZodObject<{
                maxCpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                maxMemory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                minCpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                minMemory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                defaultCpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                defaultMemory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                maxGpuCount: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                cpuCeiling: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                memoryCeiling: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                requireLimits: z.ZodOptional<z.ZodBoolean>;
            }, z.core.$strict>>;
            image: z.ZodOptional<z.ZodObject<{
                allowedRegistries: z.ZodOptional<z.ZodArray<z.ZodString>>;
                allowedImages: z.ZodOptional<z.ZodArray<z.ZodString>>;
            }, z.core.$strict>>;
            network: z.ZodOptional<z.ZodObject<{
                allowedEgress: z.ZodOptional<z.ZodArray<z.ZodObject<{
                    cidr: z.ZodOptional<z.ZodObject<{
                        cidr: z.ZodString;
                        except: z.ZodOptional<z.ZodArray<z.ZodString>>;
                    }, z.core.$strict>>;
                    httpsHostname: z.ZodOptional<z.ZodString>;
                    dnsName: z.ZodOptional<z.ZodString>;
                    tenant: z.ZodOptional<z.ZodEnum<{
                        TENANT_SCOPE_SAME_ORG: "TENANT_SCOPE_SAME_ORG";
                        TENANT_SCOPE_SAME_USER: "TENANT_SCOPE_SAME_USER";
                        TENANT_SCOPE_SANDBOX_NETWORK: "TENANT_SCOPE_SANDBOX_NETWORK";
                    }>>;
                    any: z.ZodOptional<z.ZodBoolean>;
                    selector: z.ZodOptional<z.ZodObject<{
                        podLabels: z.ZodRecord<z.ZodString, z.ZodString>;
                        namespaceLabels: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>>;
                    }, z.core.$strict>>;
                    ports: z.ZodOptional<z.ZodArray<z.ZodObject<{
                        protocol: z.ZodOptional<z.ZodEnum<{
                            SCTP: "SCTP";
                            TCP: "TCP";
                            UDP: "UDP";
                        }>>;
                        port: z.ZodNumber;
                        endPort: z.ZodOptional<z.ZodNumber>;
                    }, z.core.$strict>>>;
                    httpsHostnameExcept: z.ZodOptional<z.ZodArray<z.ZodString>>;
                    dnsNameExcept: z.ZodOptional<z.ZodArray<z.ZodString>>;
                }, z.core.$strict>>>;
                defaultEgress: z.ZodOptional<z.ZodArray<z.ZodObject<{
                    cidr: z.ZodOptional<z.ZodObject<{
                        cidr: z.ZodString;
                        except: z.ZodOptional<z.ZodArray<z.ZodString>>;
                    }, z.core.$strict>>;
                    httpsHostname: z.ZodOptional<z.ZodString>;
                    dnsName: z.ZodOptional<z.ZodString>;
                    tenant: z.ZodOptional<z.ZodEnum<{
                        TENANT_SCOPE_SAME_ORG: "TENANT_SCOPE_SAME_ORG";
                        TENANT_SCOPE_SAME_USER: "TENANT_SCOPE_SAME_USER";
                        TENANT_SCOPE_SANDBOX_NETWORK: "TENANT_SCOPE_SANDBOX_NETWORK";
                    }>>;
                    any: z.ZodOptional<z.ZodBoolean>;
                    selector: z.ZodOptional<z.ZodObject<{
                        podLabels: z.ZodRecord<z.ZodString, z.ZodString>;
                        namespaceLabels: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>>;
                    }, z.core.$strict>>;
                    ports: z.ZodOptional<z.ZodArray<z.ZodObject<{
                        protocol: z.ZodOptional<z.ZodEnum<{
                            SCTP: "SCTP";
                            TCP: "TCP";
                            UDP: "UDP";
                        }>>;
                        port: z.ZodNumber;
                        endPort: z.ZodOptional<z.ZodNumber>;
                    }, z.core.$strict>>>;
                    httpsHostnameExcept: z.ZodOptional<z.ZodArray<z.ZodString>>;
                    dnsNameExcept: z.ZodOptional<z.ZodArray<z.ZodString>>;
                }, z.core.$strict>>>;
                denyHttpsHostnameRules: z.ZodOptional<z.ZodBoolean>;
                denyDns: z.ZodOptional<z.ZodBoolean>;
                allowedIngress: z.ZodOptional<z.ZodArray<z.ZodObject<{
                    cidr: z.ZodOptional<z.ZodObject<{
                        cidr: z.ZodString;
                        except: z.ZodOptional<z.ZodArray<z.ZodString>>;
                    }, z.core.$strict>>;
                    tenant: z.ZodOptional<z.ZodEnum<{
                        TENANT_SCOPE_SAME_ORG: "TENANT_SCOPE_SAME_ORG";
                        TENANT_SCOPE_SAME_USER: "TENANT_SCOPE_SAME_USER";
                        TENANT_SCOPE_SANDBOX_NETWORK: "TENANT_SCOPE_SANDBOX_NETWORK";
                    }>>;
                    any: z.ZodOptional<z.ZodBoolean>;
                    ports: z.ZodOptional<z.ZodArray<z.ZodObject<{
                        protocol: z.ZodOptional<z.ZodEnum<{
                            SCTP: "SCTP";
                            TCP: "TCP";
                            UDP: "UDP";
                        }>>;
                        port: z.ZodNumber;
                        endPort: z.ZodOptional<z.ZodNumber>;
                    }, z.core.$strict>>>;
                }, z.core.$strict>>>;
                defaultIngress: z.ZodOptional<z.ZodArray<z.ZodObject<{
                    cidr: z.ZodOptional<z.ZodObject<{
                        cidr: z.ZodString;
                        except: z.ZodOptional<z.ZodArray<z.ZodString>>;
                    }, z.core.$strict>>;
                    tenant: z.ZodOptional<z.ZodEnum<{
                        TENANT_SCOPE_SAME_ORG: "TENANT_SCOPE_SAME_ORG";
                        TENANT_SCOPE_SAME_USER: "TENANT_SCOPE_SAME_USER";
                        TENANT_SCOPE_SANDBOX_NETWORK: "TENANT_SCOPE_SANDBOX_NETWORK";
                    }>>;
                    any: z.ZodOptional<z.ZodBoolean>;
                    ports: z.ZodOptional<z.ZodArray<z.ZodObject<{
                        protocol: z.ZodOptional<z.ZodEnum<{
                            SCTP: "SCTP";
                            TCP: "TCP";
                            UDP: "UDP";
                        }>>;
                        port: z.ZodNumber;
                        endPort: z.ZodOptional<z.ZodNumber>;
                    }, z.core.$strict>>>;
                }, z.core.$strict>>>;
                dnsEgress: z.ZodOptional<z.ZodEnum<{
                    DNS_EGRESS_MODE_ALLOW: "DNS_EGRESS_MODE_ALLOW";
                    DNS_EGRESS_MODE_DENY: "DNS_EGRESS_MODE_DENY";
                    DNS_EGRESS_MODE_UNSPECIFIED: "DNS_EGRESS_MODE_UNSPECIFIED";
                }>>;
            }, z.core.$strict>>;
            security: z.ZodOptional<z.ZodObject<{
                allowPrivileged: z.ZodOptional<z.ZodBoolean>;
                allowedCapabilities: z.ZodOptional<z.ZodArray<z.ZodString>>;
                allowedSeccompProfiles: z.ZodOptional<z.ZodArray<z.ZodString>>;
                allowedRuntimeClasses: z.ZodOptional<z.ZodArray<z.ZodString>>;
                defaultCpuRuntimeClass: z.ZodOptional<z.ZodString>;
                defaultGpuRuntimeClass: z.ZodOptional<z.ZodString>;
            }, z.core.$strict>>;
            instance: z.ZodOptional<z.ZodObject<{
                allowedInstanceTypes: z.ZodOptional<z.ZodArray<z.ZodString>>;
            }, z.core.$strict>>;
            lifecycle: z.ZodOptional<z.ZodObject<{
                defaultLifetimeSeconds: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
            }, z.core.$strict>>;
            metadata: z.ZodOptional<z.ZodObject<{
                deniedAnnotationPrefixes: z.ZodOptional<z.ZodArray<z.ZodString>>;
                maxAnnotationCount: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
            }, z.core.$strict>>;
            volumes: z.ZodOptional<z.ZodObject<{
                allowedMedia: z.ZodOptional<z.ZodArray<z.ZodEnum<{
                    STORAGE_MEDIUM_DISK: "STORAGE_MEDIUM_DISK";
                    STORAGE_MEDIUM_MEMORY: "STORAGE_MEDIUM_MEMORY";
                    STORAGE_MEDIUM_UNSPECIFIED: "STORAGE_MEDIUM_UNSPECIFIED";
                }>>>;
                maxSize: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
            }, z.core.$strict>>;
        }, z.core.$strict>>;
        controlPlaneAccess: z.ZodOptional<z.ZodObject<{
            sourceIpAllowlist: z.ZodOptional<z.ZodObject<{
                cidrs: z.ZodOptional<z.ZodArray<z.ZodString>>;
            }, z.core.$strict>>;
        }, z.core.$strict>>;
    }, z.core.$strict>>;
    policyEtag: z.ZodOptional<z.ZodString>;
    identity: z.ZodDefault<z.ZodObject<{
        organizationId: z.ZodOptional<z.ZodString>;
        clusterId: z.ZodOptional<z.ZodString>;
        zone: z.ZodOptional<z.ZodString>;
        runnerGroupId: z.ZodOptional<z.ZodString>;
    }, z.core.$strip>>;
}, z.core.$strip>;
export type RunnerConfigFile = z.infer<typeof RunnerConfigFileSchema>;
export interface LoadedConfig {
    file: RunnerConfigFile;
    /** Identifies the content read, so an unchanged file is not re-applied. */
    fingerprint: string;
}
/**
 * Reads and validates the config file. YAML 1.1 rules, as for Kubernetes ConfigMaps; JSON is a
 * subset. Throws an Error naming the file and every invalid field.
 */
export declare function loadRunnerConfigFile(path: string): Promise<LoadedConfig>;
/** The policy the runner applies now, and where it came from. */
export interface ActivePolicy {
    policy: Policy;
    etag: string | null;
    usingDefault: boolean;
}
/**
 * Watches the config file and calls `onChange` with each new valid content.
 *
 * Writers replace the file by rename (ConfigMap symlink swaps, `write tmp + rename`), which
 * detaches an inode watch; so the DIRECTORY is watched and the file re-read by name, plus a
 * periodic stat as a fallback for filesystems where fs.watch misses events (overlay, NFS).
 * An invalid file is reported through `onError` and the last good config stays in force.
 */
export declare class ConfigFileWatcher {
    private readonly path;
    private readonly onChange;
    private readonly onError;
    private readonly pollMs;
    private watcher;
    private timer;
    private lastFingerprint;
    private lastStat;
    private reading;
    constructor(path: string, onChange: (cfg: LoadedConfig) => void, onError: (err: Error) => void, pollMs?: number);
    /** Reads the file once (if present) and starts watching. */
    start(): Promise<LoadedConfig | undefined>;
    /** Re-reads the file now (serialized, so two events never race to apply an older content last). */
    check(): void;
    /** Resolves once every read queued so far has been applied. */
    settled(): Promise<void>;
    stop(): void;
    private statKey;
}
