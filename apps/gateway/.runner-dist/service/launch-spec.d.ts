import type { ResolvedContainer, ResolvedSandboxSpec, SandboxEffectiveFields, SandboxSpec } from '@paddock/contracts';
import { z } from 'zod';
import type { LaunchSpec } from '../backend/sandbox-backend';
/** Host-protecting caps the policy has no field for; they come from the runner's configuration. */
export interface SandboxHostCaps {
    pidsMax: number;
    diskBytes: number;
    openFilesMax: number;
}
/** The label under which a sandbox's metadata survives a runner restart (the backend persists labels). */
export declare const SANDBOX_META_LABEL = "paddock.dev/sandbox";
export declare const RUNNER_ID_LABEL = "paddock.dev/runner-id";
/**
 * What a restarted runner needs to serve an adopted sandbox again exactly as before: the request
 * as accepted and what the policy resolved at its launch (never re-resolved against a newer policy).
 */
export declare const PersistedSandboxMetaSchema: z.ZodObject<{
    v: z.ZodLiteral<1>;
    organizationId: z.ZodString;
    spec: z.ZodObject<{
        containers: z.ZodPipe<z.ZodOptional<z.ZodArray<z.ZodObject<{
            name: z.ZodOptional<z.ZodString>;
            image: z.ZodOptional<z.ZodString>;
            command: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodString>]>>;
            args: z.ZodOptional<z.ZodArray<z.ZodString>>;
            environmentVariables: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>>;
            resources: z.ZodOptional<z.ZodObject<{
                cpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                memory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                gpu: z.ZodOptional<z.ZodObject<{
                    count: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                    type: z.ZodOptional<z.ZodString>;
                    memoryGb: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                }, z.core.$strict>>;
            }, z.core.$strict>>;
            resourceRequirements: z.ZodOptional<z.ZodObject<{
                requests: z.ZodOptional<z.ZodObject<{
                    cpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    memory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    gpu: z.ZodOptional<z.ZodObject<{
                        count: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                        type: z.ZodOptional<z.ZodString>;
                        memoryGb: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                    }, z.core.$strict>>;
                }, z.core.$strict>>;
                limits: z.ZodOptional<z.ZodObject<{
                    cpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    memory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    gpu: z.ZodOptional<z.ZodObject<{
                        count: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                        type: z.ZodOptional<z.ZodString>;
                        memoryGb: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                    }, z.core.$strict>>;
                }, z.core.$strict>>;
            }, z.core.$strict>>;
            workingDir: z.ZodOptional<z.ZodString>;
            securityContext: z.ZodOptional<z.ZodObject<{
                runAsUser: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                runAsGroup: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                privileged: z.ZodOptional<z.ZodBoolean>;
                allowPrivilegeEscalation: z.ZodOptional<z.ZodBoolean>;
                readOnlyRootFilesystem: z.ZodOptional<z.ZodBoolean>;
                capabilitiesAdd: z.ZodOptional<z.ZodArray<z.ZodString>>;
                capabilitiesDrop: z.ZodOptional<z.ZodArray<z.ZodString>>;
                seccompProfile: z.ZodOptional<z.ZodString>;
            }, z.core.$strict>>;
            files: z.ZodOptional<z.ZodArray<z.ZodObject<{
                path: z.ZodString;
                content: z.ZodString;
            }, z.core.$strict>>>;
            volumeMounts: z.ZodOptional<z.ZodArray<z.ZodObject<{
                volume: z.ZodString;
                mountPath: z.ZodString;
                readOnly: z.ZodOptional<z.ZodBoolean>;
                subPath: z.ZodOptional<z.ZodString>;
            }, z.core.$strict>>>;
            primary: z.ZodOptional<z.ZodBoolean>;
            secretStores: z.ZodOptional<z.ZodArray<z.ZodRecord<z.ZodString, z.ZodUnknown>>>;
            imagePullCredentials: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
            startupProbe: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
        }, z.core.$strict>>>, z.ZodTransform<{
            name?: string | undefined;
            image?: string | undefined;
            command?: string | string[] | undefined;
            args?: string[] | undefined;
            environmentVariables?: Record<string, string> | undefined;
            resources?: {
                cpu?: string | number | undefined;
                memory?: string | number | undefined;
                gpu?: {
                    count?: number | undefined;
                    type?: string | undefined;
                    memoryGb?: number | undefined;
                } | undefined;
            } | undefined;
            resourceRequirements?: {
                requests?: {
                    cpu?: string | number | undefined;
                    memory?: string | number | undefined;
                    gpu?: {
                        count?: number | undefined;
                        type?: string | undefined;
                        memoryGb?: number | undefined;
                    } | undefined;
                } | undefined;
                limits?: {
                    cpu?: string | number | undefined;
                    memory?: string | number | undefined;
                    gpu?: {
                        count?: number | undefined;
                        type?: string | undefined;
                        memoryGb?: number | undefined;
                    } | undefined;
                } | undefined;
            } | undefined;
            workingDir?: string | undefined;
            securityContext?: {
                runAsUser?: number | undefined;
                runAsGroup?: number | undefined;
                privileged?: boolean | undefined;
                allowPrivilegeEscalation?: boolean | undefined;
                readOnlyRootFilesystem?: boolean | undefined;
                capabilitiesAdd?: string[] | undefined;
                capabilitiesDrop?: string[] | undefined;
                seccompProfile?: string | undefined;
            } | undefined;
            files?: {
                path: string;
                content: string;
            }[] | undefined;
            volumeMounts?: {
                volume: string;
                mountPath: string;
                readOnly?: boolean | undefined;
                subPath?: string | undefined;
            }[] | undefined;
            primary?: boolean | undefined;
            secretStores?: Record<string, unknown>[] | undefined;
            imagePullCredentials?: Record<string, unknown> | undefined;
            startupProbe?: Record<string, unknown> | undefined;
        }[], {
            name?: string | undefined;
            image?: string | undefined;
            command?: string | string[] | undefined;
            args?: string[] | undefined;
            environmentVariables?: Record<string, string> | undefined;
            resources?: {
                cpu?: string | number | undefined;
                memory?: string | number | undefined;
                gpu?: {
                    count?: number | undefined;
                    type?: string | undefined;
                    memoryGb?: number | undefined;
                } | undefined;
            } | undefined;
            resourceRequirements?: {
                requests?: {
                    cpu?: string | number | undefined;
                    memory?: string | number | undefined;
                    gpu?: {
                        count?: number | undefined;
                        type?: string | undefined;
                        memoryGb?: number | undefined;
                    } | undefined;
                } | undefined;
                limits?: {
                    cpu?: string | number | undefined;
                    memory?: string | number | undefined;
                    gpu?: {
                        count?: number | undefined;
                        type?: string | undefined;
                        memoryGb?: number | undefined;
                    } | undefined;
                } | undefined;
            } | undefined;
            workingDir?: string | undefined;
            securityContext?: {
                runAsUser?: number | undefined;
                runAsGroup?: number | undefined;
                privileged?: boolean | undefined;
                allowPrivilegeEscalation?: boolean | undefined;
                readOnlyRootFilesystem?: boolean | undefined;
                capabilitiesAdd?: string[] | undefined;
                capabilitiesDrop?: string[] | undefined;
                seccompProfile?: string | undefined;
            } | undefined;
            files?: {
                path: string;
                content: string;
            }[] | undefined;
            volumeMounts?: {
                volume: string;
                mountPath: string;
                readOnly?: boolean | undefined;
                subPath?: string | undefined;
            }[] | undefined;
            primary?: boolean | undefined;
            secretStores?: Record<string, unknown>[] | undefined;
            imagePullCredentials?: Record<string, unknown> | undefined;
            startupProbe?: Record<string, unknown> | undefined;
        }[] | undefined>>;
        primaryContainer: z.ZodOptional<z.ZodString>;
        initContainers: z.ZodOptional<z.ZodArray<z.ZodObject<{
            name: z.ZodOptional<z.ZodString>;
            image: z.ZodOptional<z.ZodString>;
            command: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodString>]>>;
            args: z.ZodOptional<z.ZodArray<z.ZodString>>;
            environmentVariables: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>>;
            resources: z.ZodOptional<z.ZodObject<{
                cpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                memory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                gpu: z.ZodOptional<z.ZodObject<{
                    count: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                    type: z.ZodOptional<z.ZodString>;
                    memoryGb: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                }, z.core.$strict>>;
            }, z.core.$strict>>;
            resourceRequirements: z.ZodOptional<z.ZodObject<{
                requests: z.ZodOptional<z.ZodObject<{
                    cpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    memory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    gpu: z.ZodOptional<z.ZodObject<{
                        count: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                        type: z.ZodOptional<z.ZodString>;
                        memoryGb: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                    }, z.core.$strict>>;
                }, z.core.$strict>>;
                limits: z.ZodOptional<z.ZodObject<{
                    cpu: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    memory: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                    gpu: z.ZodOptional<z.ZodObject<{
                        count: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                        type: z.ZodOptional<z.ZodString>;
                        memoryGb: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                    }, z.core.$strict>>;
                }, z.core.$strict>>;
            }, z.core.$strict>>;
            workingDir: z.ZodOptional<z.ZodString>;
            securityContext: z.ZodOptional<z.ZodObject<{
                runAsUser: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                runAsGroup: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
                privileged: z.ZodOptional<z.ZodBoolean>;
                allowPrivilegeEscalation: z.ZodOptional<z.ZodBoolean>;
                readOnlyRootFilesystem: z.ZodOptional<z.ZodBoolean>;
                capabilitiesAdd: z.ZodOptional<z.ZodArray<z.ZodString>>;
                capabilitiesDrop: z.ZodOptional<z.ZodArray<z.ZodString>>;
                seccompProfile: z.ZodOptional<z.ZodString>;
            }, z.core.$strict>>;
            files: z.ZodOptional<z.ZodArray<z.ZodObject<{
                path: z.ZodString;
                content: z.ZodString;
            }, z.core.$strict>>>;
            volumeMounts: z.ZodOptional<z.ZodArray<z.ZodObject<{
                volume: z.ZodString;
                mountPath: z.ZodString;
                readOnly: z.ZodOptional<z.ZodBoolean>;
                subPath: z.ZodOptional<z.ZodString>;
            }, z.core.$strict>>>;
            primary: z.ZodOptional<z.ZodBoolean>;
            secretStores: z.ZodOptional<z.ZodArray<z.ZodRecord<z.ZodString, z.ZodUnknown>>>;
            imagePullCredentials: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
            startupProbe: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
        }, z.core.$strict>>>;
        volumes: z.ZodOptional<z.ZodArray<z.ZodObject<{
            name: z.ZodString;
            scratch: z.ZodOptional<z.ZodObject<{
                size: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodNumber]>>;
                medium: z.ZodOptional<z.ZodEnum<{
                    STORAGE_MEDIUM_DISK: "STORAGE_MEDIUM_DISK";
                    STORAGE_MEDIUM_MEMORY: "STORAGE_MEDIUM_MEMORY";
                    STORAGE_MEDIUM_UNSPECIFIED: "STORAGE_MEDIUM_UNSPECIFIED";
                }>>;
                restoreFromSnapshotId: z.ZodOptional<z.ZodString>;
            }, z.core.$strict>>;
            volumeId: z.ZodOptional<z.ZodString>;
        }, z.core.$strict>>>;
        services: z.ZodOptional<z.ZodArray<z.ZodRecord<z.ZodString, z.ZodUnknown>>>;
        maxLifetimeSeconds: z.ZodOptional<z.ZodPipe<z.ZodUnion<readonly [z.ZodNumber, z.ZodString]>, z.ZodTransform<number, string | number>>>;
        networkIds: z.ZodOptional<z.ZodArray<z.ZodString>>;
        objectStorageAccess: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
        tags: z.ZodOptional<z.ZodArray<z.ZodString>>;
        runnerIds: z.ZodOptional<z.ZodArray<z.ZodString>>;
        network: z.ZodOptional<z.ZodObject<{
            egress: z.ZodOptional<z.ZodArray<z.ZodObject<{
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
            ingress: z.ZodOptional<z.ZodArray<z.ZodObject<{
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
            denyEgress: z.ZodOptional<z.ZodBoolean>;
            denyIngress: z.ZodOptional<z.ZodBoolean>;
            dnsEgress: z.ZodOptional<z.ZodEnum<{
                DNS_EGRESS_MODE_ALLOW: "DNS_EGRESS_MODE_ALLOW";
                DNS_EGRESS_MODE_DENY: "DNS_EGRESS_MODE_DENY";
                DNS_EGRESS_MODE_UNSPECIFIED: "DNS_EGRESS_MODE_UNSPECIFIED";
            }>>;
        }, z.core.$strict>>;
        annotations: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>>;
        instanceType: z.ZodOptional<z.ZodString>;
        mode: z.ZodOptional<z.ZodEnum<{
            SANDBOX_MODE_CKS: "SANDBOX_MODE_CKS";
            SANDBOX_MODE_SERVERLESS: "SANDBOX_MODE_SERVERLESS";
            SANDBOX_MODE_UNSPECIFIED: "SANDBOX_MODE_UNSPECIFIED";
        }>>;
        runtimeClass: z.ZodOptional<z.ZodString>;
    }, z.core.$strict>;
    labels: z.ZodRecord<z.ZodString, z.ZodString>;
    effective: z.ZodObject<{
        effectiveResources: z.ZodOptional<z.ZodObject<{
            cpu: z.ZodString;
            memory: z.ZodString;
            gpuCount: z.ZodNumber;
        }, z.core.$strip>>;
        effectiveResourceRequirements: z.ZodOptional<z.ZodArray<z.ZodObject<{
            container: z.ZodString;
            requests: z.ZodObject<{
                cpu: z.ZodString;
                memory: z.ZodString;
                gpuCount: z.ZodNumber;
            }, z.core.$strip>;
            limits: z.ZodObject<{
                cpu: z.ZodString;
                memory: z.ZodString;
                gpuCount: z.ZodNumber;
            }, z.core.$strip>;
        }, z.core.$strip>>>;
        effectiveMaxLifetimeSeconds: z.ZodOptional<z.ZodNumber>;
        effectiveEgress: z.ZodOptional<z.ZodObject<{
            denyAll: z.ZodBoolean;
            unrestricted: z.ZodBoolean;
            rules: z.ZodArray<z.ZodObject<{
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
            }, z.core.$strict>>;
            source: z.ZodEnum<{
                deny: "deny";
                "policy-default": "policy-default";
                "runner-default": "runner-default";
                spec: "spec";
            }>;
        }, z.core.$strip>>;
        effectiveIngress: z.ZodOptional<z.ZodObject<{
            denyAll: z.ZodBoolean;
            unrestricted: z.ZodBoolean;
            rules: z.ZodArray<z.ZodObject<{
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
            }, z.core.$strict>>;
            source: z.ZodEnum<{
                deny: "deny";
                "policy-default": "policy-default";
                "runner-default": "runner-default";
                spec: "spec";
            }>;
        }, z.core.$strip>>;
        effectiveRuntimeClass: z.ZodOptional<z.ZodString>;
    }, z.core.$strip>;
    requestFingerprint: z.ZodString;
    createTime: z.ZodString;
    cpuMillis: z.ZodNumber;
    memoryBytes: z.ZodNumber;
}, z.core.$strip>;
export type PersistedSandboxMeta = z.infer<typeof PersistedSandboxMetaSchema>;
export declare function primaryContainerOf(resolved: ResolvedSandboxSpec): ResolvedContainer;
/** The status echoes of a resolved spec (SPEC §4.3 `effective*`). */
export declare function effectiveFieldsOf(resolved: ResolvedSandboxSpec): SandboxEffectiveFields;
/** CPU and memory the sandbox is capped at: the primary container's limits (requests when unset). */
export declare function allocationOf(resolved: ResolvedSandboxSpec): {
    cpuMillis: number;
    memoryBytes: number;
};
/**
 * Maps a resolved, admitted spec to what a backend launches. Pure.
 *
 * Network: the local backend can only share the host network or have none, so anything short of
 * unrestricted egress runs with no network (the policy engine has already refused rule kinds the
 * runner's capabilities cannot enforce; this is the safe fallback, never a widening).
 */
export declare function toLaunchSpec(input: {
    sandboxId: string;
    organizationId: string;
    runnerId: string;
    spec: SandboxSpec;
    resolved: ResolvedSandboxSpec;
    caps: SandboxHostCaps;
    meta: PersistedSandboxMeta;
}): LaunchSpec;
