import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';

const run = promisify(execFile);

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: { name: string; key: string };
    secretKeyRef?: { name: string; key: string };
  };
}

/** `kubectl kustomize dir`, as an operator's `kubectl apply -k dir` would see it. */
export async function render(dir: string): Promise<K8sObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', dir], { maxBuffer: 16 * 1024 * 1024 });
  return (loadAll(stdout) as (K8sObject | null)[]).filter((o): o is K8sObject => o !== null);
}

/** A tag that names a release (x.y.z) or an immutable digest; never `latest` or no tag. */
export function isPinned(image: string): boolean {
  if (/@sha256:[a-f0-9]{64}$/.test(image)) return true;
  const tag = image.slice(image.lastIndexOf('/') + 1).split(':')[1];
  return tag !== undefined && /^v?\d+\.\d+\.\d+([.-][0-9A-Za-z.-]+)?$/.test(tag);
}

export const find = (objects: K8sObject[], kind: string, name: string): K8sObject | undefined =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

/** The generated ConfigMap whose name (before kustomize's hash suffix) is `name`. */
export const generated = (objects: K8sObject[], name: string): K8sObject | undefined =>
  objects.find((o) => o.kind === 'ConfigMap' && new RegExp(`^${name}-[a-z0-9]{10}$`).test(o.metadata.name));

export const selects = (selector: Record<string, string> | undefined, labels: Record<string, string>): boolean =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/**
 * The environment the kubelet gives container `container` of pod `podName`: `$(VAR)` expanded from
 * the variables before it, fields, the rendered ConfigMaps' keys, and `secrets` (not in git) for
 * secretKeyRef. A reference that finds nothing is thrown, as the kubelet would refuse to start it.
 */
export function podEnv(objects: K8sObject[], container: { env?: EnvVar[] }, podName: string, secrets: Record<string, Record<string, string>>) {
  const env: Record<string, string> = {};
  for (const v of container.env ?? []) {
    const from = v.valueFrom;
    let value: string | undefined;
    if (v.value !== undefined) value = v.value.replace(/\$\((\w+)\)/g, (ref, name: string) => env[name] ?? ref);
    else if (from?.fieldRef?.fieldPath === 'metadata.name') value = podName;
    else if (from?.configMapKeyRef)
      value = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === from.configMapKeyRef!.name)?.data?.[from.configMapKeyRef.key];
    else if (from?.secretKeyRef) value = secrets[from.secretKeyRef.name]?.[from.secretKeyRef.key];
    if (value === undefined) throw new Error(`${v.name}: its value refers to nothing (${JSON.stringify(v.valueFrom ?? v.value)})`);
    env[v.name] = value;
  }
  return env;
}

/** A port number, or the number of the container port that name `port`. */
export const portNumber = (container: { ports?: { name: string; containerPort: number }[] }, port: string | number | undefined) =>
  typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
