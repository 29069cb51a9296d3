import { K8sObject, portNumber, selects } from './k8s-render';

/** Where a connection comes from, as NetworkPolicy sees it. */
export interface Source {
  name: string;
  /** A pod of the region's namespace (its labels), of another namespace, or nothing of the cluster. */
  labels?: Record<string, string>;
  where: 'namespace' | 'cluster' | 'outside';
}

interface Peer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
interface Rule {
  from?: Peer[];
  ports?: { port?: number | string }[];
}

const matchAll = (selector: { matchLabels?: Record<string, string> } | undefined) =>
  !!selector && Object.keys(selector.matchLabels ?? {}).length === 0;
const selectsPod = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
  matchAll(selector) || selects(selector?.matchLabels, labels);

function peerAdmits(peer: Peer, source: Source): boolean {
  if (peer.ipBlock) return peer.ipBlock.cidr === '0.0.0.0/0' && !peer.ipBlock.except?.length;
  if (source.where === 'outside') return false;
  if (peer.namespaceSelector) {
    // Only the selector that matches every namespace can be judged without the cluster's namespaces.
    if (!matchAll(peer.namespaceSelector)) return false;
    return !peer.podSelector || selectsPod(peer.podSelector, source.labels ?? {});
  }
  return source.where === 'namespace' && selectsPod(peer.podSelector, source.labels ?? {});
}

/**
 * Whether `source` may open a connection to `port` of pods labelled `labels` (whose container
 * declares `container`'s named ports): allowed when no policy isolates the pods for ingress, else
 * when a rule of one that does allows the port from that source.
 */
export function admits(objects: K8sObject[], pod: { labels: Record<string, string>; container: any }, port: number, source: Source): boolean {
  const policies = objects.filter(
    (o) => o.kind === 'NetworkPolicy' && (o.spec.policyTypes ?? ['Ingress']).includes('Ingress') && selectsPod(o.spec.podSelector, pod.labels),
  );
  if (policies.length === 0) return true;
  return policies.some((p) =>
    ((p.spec.ingress ?? []) as Rule[]).some(
      (rule) =>
        (!rule.ports?.length || rule.ports.some((r) => r.port === undefined || portNumber(pod.container, r.port) === port)) &&
        (!rule.from?.length || rule.from.some((peer) => peerAdmits(peer, source))),
    ),
  );
}

const HERALD_POD: Source = {
  name: "a Herald pod of the region's namespace",
  labels: { 'app.kubernetes.io/name': 'herald', 'app.kubernetes.io/component': 'worker' },
  where: 'namespace',
};
const NATS_POD: Source = { name: 'a NATS server of the region', labels: { 'app.kubernetes.io/name': 'nats' }, where: 'namespace' };
const OTHER_POD: Source = { name: 'a pod of another namespace', labels: { app: 'prometheus' }, where: 'cluster' };
const OUTSIDE: Source = { name: 'the internet', where: 'outside' };

/** Ports and who must, and must not, reach them, per workload (by the `app.kubernetes.io/component` or name). */
const RULES: { workload: string; port: number; open: Source[]; closed: Source[] }[] = [
  { workload: 'api', port: 3000, open: [OUTSIDE], closed: [] },
  { workload: 'api', port: 3001, open: [OUTSIDE], closed: [] },
  ...[25, 465, 587, 2465, 2587, 2525].map((port) => ({ workload: 'smtp', port, open: [OUTSIDE], closed: [] })),
  ...['api', 'smtp', 'worker', 'webhooks', 'metrics'].map((workload) => ({ workload, port: 9464, open: [OTHER_POD], closed: [OUTSIDE] })),
  { workload: 'nats', port: 4222, open: [HERALD_POD], closed: [OTHER_POD, OUTSIDE] },
  { workload: 'nats', port: 6222, open: [NATS_POD], closed: [HERALD_POD, OTHER_POD, OUTSIDE] },
  { workload: 'nats', port: 7222, open: [OUTSIDE], closed: [] },
  { workload: 'nats', port: 8222, open: [OTHER_POD], closed: [OUTSIDE] },
];

/** The rendered region's NetworkPolicies against RULES, as a list of problems (empty when right). */
export function networkProblems(objects: K8sObject[]): string[] {
  const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet');
  const pods = new Map(
    workloads.map((w) => {
      const labels: Record<string, string> = w.spec.template.metadata.labels;
      return [labels['app.kubernetes.io/component'] ?? labels['app.kubernetes.io/name'], { labels, container: w.spec.template.spec.containers[0] }];
    }),
  );
  const problems: string[] = [];
  for (const { workload, port, open, closed } of RULES) {
    const pod = pods.get(workload);
    if (!pod) {
      problems.push(`no ${workload} pods`);
      continue;
    }
    for (const s of open) if (!admits(objects, pod, port, s)) problems.push(`${workload} ${port} is closed to ${s.name}`);
    for (const s of closed) if (admits(objects, pod, port, s)) problems.push(`${workload} ${port} is open to ${s.name}`);
  }
  // Any other port of any pod: open to no one outside.
  for (const [workload, pod] of pods) {
    for (const p of pod.container.ports ?? []) {
      const listed = RULES.some((r) => r.workload === workload && r.port === p.containerPort);
      if (!listed && admits(objects, pod, p.containerPort, OUTSIDE)) problems.push(`${workload} ${p.containerPort} is open to ${OUTSIDE.name}`);
    }
  }
  return problems;
}
