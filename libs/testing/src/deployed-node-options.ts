import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type DeployedRole = 'api' | 'worker' | 'webhooks' | 'smtp';

/**
 * The NODE_OPTIONS a role's Kubernetes deployment sets (k8s/base/<role>.yaml: V8's heap ceiling
 * sized to the pod's memory limit), so a soak or a bench judges the memory the role would hold in
 * its pod. Unbounded, V8 sizes its old space for the machine it runs on and collects lazily.
 */
export function deployedNodeOptions(role: DeployedRole): string {
  const manifest = readFileSync(join(repositoryRoot(), 'k8s', 'base', `${role}.yaml`), 'utf8');
  const found = /- name: NODE_OPTIONS\s+value: (.+)/.exec(manifest);
  if (!found) throw new Error(`k8s/base/${role}.yaml sets no NODE_OPTIONS`);
  return found[1].trim().replace(/^(["'])(.*)\1$/, '$2');
}

/** The checkout this file belongs to (from the sources or from dist/). */
function repositoryRoot(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) if (existsSync(join(dir, 'k8s', 'base'))) return dir;
  throw new Error(`no k8s/base above ${__dirname}`);
}
