import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PaddockError } from '@paddock/contracts';
import { z } from 'zod';
import type { ContainerStatus } from '../sandbox-backend';
import type { SupervisorPlan } from './supervisor-plan';

/**
 * What the supervisor of a sandbox with several containers records about its init containers and
 * sidecars (`<sandbox dir>/containers.json`, rewritten whole on every change). The primary's own
 * state is the sandbox's, so the runner derives it from the sandbox's state and exit code.
 */
export const ContainersFileSchema = z.array(
  z.object({
    name: z.string(),
    state: z.enum(['waiting', 'running', 'terminated']),
    exitCode: z.number().int().nullable().optional(),
  }),
);

export const CONTAINERS_FILE = 'containers.json';

/**
 * What the runner keeps in memory of a sandbox's plan: the fields its calls read after the launch
 * (exec environments, container names, served ports). The rest (the files' contents above all)
 * stays on disk, in `plan.json`, which is written once per launch and never changed after.
 */
export interface PlanView {
  execEnv: Record<string, string>;
  primaryName?: string;
  initContainers?: { name: string }[];
  sidecars?: { name: string; execEnv: Record<string, string> }[];
  servicePorts?: number[];
}

export function planViewOf(plan: SupervisorPlan): PlanView {
  return {
    execEnv: plan.execEnv,
    ...(plan.primaryName !== undefined ? { primaryName: plan.primaryName } : {}),
    ...(plan.initContainers ? { initContainers: plan.initContainers.map((c) => ({ name: c.name })) } : {}),
    ...(plan.sidecars ? { sidecars: plan.sidecars.map((c) => ({ name: c.name, execEnv: c.execEnv })) } : {}),
    ...(plan.servicePorts ? { servicePorts: plan.servicePorts } : {}),
  };
}

/** The plan's primary container name (`main` when the sandbox did not name it). */
export function primaryNameOf(plan: Pick<SupervisorPlan, 'primaryName'>): string {
  return plan.primaryName ?? 'main';
}

function unknownContainer(container: string, plan: PlanView): PaddockError {
  const names = [
    primaryNameOf(plan),
    ...(plan.sidecars ?? []).map((s) => s.name),
    ...(plan.initContainers ?? []).map((s) => s.name),
  ];
  return new PaddockError(
    'invalid_argument',
    `container ${JSON.stringify(container)} is not a container of this sandbox (containers: ${names.join(', ')})`,
    {
      reason: 'CWSANDBOX_INVALID_REQUEST',
      violations: [
        { field: 'container', rule: 'exists', description: `one of ${names.join(', ')}` },
      ],
    },
  );
}

/** Whether `container` (absent = the primary) names the primary. Throws for a name the sandbox has not got. */
export function isPrimary(plan: PlanView, container: string | undefined): boolean {
  if (!container || container === primaryNameOf(plan)) return true;
  if (
    (plan.sidecars ?? []).some((s) => s.name === container) ||
    (plan.initContainers ?? []).some((s) => s.name === container)
  )
    {return false;}
  throw unknownContainer(container, plan);
}

/** The environment an exec in `container` starts with; an init container (finished by then) takes none. */
export function execEnvFor(
  plan: PlanView,
  container: string | undefined,
): Record<string, string> {
  if (isPrimary(plan, container)) return plan.execEnv;
  const side = (plan.sidecars ?? []).find((s) => s.name === container);
  if (!side) {
    throw new PaddockError(
      'failed_precondition',
      `container ${JSON.stringify(container)} is an init container: it has finished and takes no exec`,
      {
        reason: 'CWSANDBOX_INVALID_REQUEST',
        violations: [
          {
            field: 'container',
            rule: 'running',
            description: 'a running container (the primary or a sidecar)',
          },
        ],
      },
    );
  }
  return side.execEnv;
}

/** The framed log file of one container of the sandbox. */
export function podLogFile(
  dir: string,
  plan: PlanView | undefined,
  container: string | undefined,
): string {
  if (!plan || isPrimary(plan, container)) return join(dir, 'log');
  return join(dir, `log.${container as string}`);
}

/** Init containers first, then the primary, then sidecars; undefined for a sandbox with one container. */
export function containerStatusesOf(
  dir: string,
  plan: PlanView | undefined,
  primary: ContainerStatus,
): ContainerStatus[] | undefined {
  if (!plan || ((plan.sidecars?.length ?? 0) === 0 && (plan.initContainers?.length ?? 0) === 0))
    {return undefined;}
  let recorded: z.infer<typeof ContainersFileSchema> = [];
  try {
    recorded = ContainersFileSchema.parse(
      JSON.parse(readFileSync(join(dir, CONTAINERS_FILE), 'utf8')),
    );
  } catch {
    // not written yet (the supervisor is still setting up): every other container is waiting
  }
  const of = (name: string): ContainerStatus => {
    const r = recorded.find((x) => x.name === name);
    return {
      name,
      state: r?.state ?? 'waiting',
      ...(typeof r?.exitCode === 'number' ? { exitCode: r.exitCode } : {}),
      restartCount: 0,
    };
  };
  return [
    ...(plan.initContainers ?? []).map((c) => of(c.name)),
    primary,
    ...(plan.sidecars ?? []).map((c) => of(c.name)),
  ];
}
