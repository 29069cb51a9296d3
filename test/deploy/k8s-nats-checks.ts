import { find, generated, isPinned, K8sObject, portNumber, selects } from './k8s-render';

export const NATS_LIVENESS = '/healthz?js-enabled-only=true';
const MONITOR_PORT = 8222;

/**
 * What a region's rendered objects must hold for its NATS JetStream cluster, as a list of the
 * problems found (empty when right), so a broken fixture can show which rule caught it.
 */
export function natsProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, problem: string) => void (ok || problems.push(problem));
  const sts = find(objects, 'StatefulSet', 'nats');
  if (!sts) return ['no StatefulSet nats'];
  const pod = sts.spec.template;
  const labels: Record<string, string> = pod.metadata.labels;
  const [c, ...others] = pod.spec.containers;
  const conf = generated(objects, 'nats-config')?.data?.['nats.conf'] ?? '';

  check(sts.spec.replicas === 3, `replicas ${sts.spec.replicas}: a region's cluster has three servers (R3 streams)`);
  check(others.length === 0, 'one container per NATS pod');
  check(isPinned(c.image), `image ${c.image} is not pinned to a release`);
  check(selects(sts.spec.selector.matchLabels, labels), "the StatefulSet's selector does not select its pods");

  const headless = find(objects, 'Service', sts.spec.serviceName);
  check(
    headless?.spec.clusterIP === 'None' && headless.spec.publishNotReadyAddresses === true && selects(headless.spec.selector, labels),
    `serviceName ${sts.spec.serviceName}: not a headless Service of the pods that publishes them before they are ready`,
  );
  for (const n of [0, 1, 2]) check(conf.includes(`nats-route://nats-${n}.${sts.spec.serviceName}:6222`), `no route to nats-${n}`);

  const probe = (name: string) => c[name]?.httpGet as { path: string; port: string | number } | undefined;
  check(probe('livenessProbe')?.path === NATS_LIVENESS, `liveness probe on ${probe('livenessProbe')?.path}, not ${NATS_LIVENESS}`);
  for (const name of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    check(portNumber(c, probe(name)?.port) === MONITOR_PORT, `${name} is not on the monitoring port ${MONITOR_PORT}`);
  }
  check(new RegExp(`^http_port: ${MONITOR_PORT}$`, 'm').test(conf), `nats.conf does not serve monitoring on ${MONITOR_PORT}`);

  const spread = pod.spec.topologySpreadConstraints ?? [];
  check(
    spread.some(
      (t: any) =>
        t.topologyKey === 'topology.kubernetes.io/zone' && t.whenUnsatisfiable === 'DoNotSchedule' && selects(t.labelSelector.matchLabels, labels),
    ),
    'the servers are not held one per zone',
  );
  const budgets = objects.filter((o) => o.kind === 'PodDisruptionBudget' && selects(o.spec.selector.matchLabels, labels));
  check(budgets.length === 1 && budgets[0].spec.maxUnavailable === 1, 'no PodDisruptionBudget keeping two of three servers up');

  const data = sts.spec.volumeClaimTemplates?.find((v: any) => v.metadata.name === 'data');
  const mount = c.volumeMounts?.find((m: any) => m.name === 'data');
  check(!!data && mount?.mountPath === '/data' && /^\s*store_dir: \/data$/m.test(conf), 'JetStream does not store on the volume claim');
  check(pod.spec.securityContext?.runAsNonRoot === true && c.securityContext?.readOnlyRootFilesystem === true, 'runs as root or writes its image');

  const herald = generated(objects, 'herald-config')?.data ?? {};
  const client = find(objects, 'Service', new URL(herald.NATS_URL ?? 'nats://missing').hostname);
  const clientPort = client?.spec.ports.find((p: any) => p.port === Number(new URL(herald.NATS_URL ?? 'nats://x').port || 4222));
  check(
    !!client && selects(client.spec.selector, labels) && portNumber(c, clientPort?.targetPort) === 4222,
    `Herald's NATS_URL ${herald.NATS_URL} does not reach the region's servers`,
  );
  return problems;
}
