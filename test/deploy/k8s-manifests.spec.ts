import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { ConfigError, configSchema, loadConfig } from '@herald/config';
import { heraldDatabases } from '@herald/database';
import { isPinned, render } from './k8s-render';

/**
 * The Kubernetes manifests in k8s/, checked offline: the rules on the base's own files and on each
 * overlay as `kubectl kustomize` renders it (Debian's kubernetes-client, or any newer kubectl),
 * and each overlay's settings merged over the base's as Herald would boot with them. The region's
 * NATS cluster has its own suite (k8s-nats.e2e-spec.ts).
 */
const K8S = join(__dirname, '..', '..', 'k8s');
const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'];
const ROLES = ['api', 'smtp', 'worker', 'webhooks', 'metrics'];
const SMTP_PORTS = [25, 465, 587, 2465, 2587];
const DRAINING_ROLES = ['smtp', 'worker'];

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
}
interface Kustomization {
  namespace?: string;
  resources: string[];
  bases?: string[];
  configMapGenerator?: { name: string; behavior?: string; literals?: string[] }[];
}

const readYaml = (file: string): K8sObject[] =>
  (loadAll(readFileSync(file, 'utf8')) as (K8sObject | null)[]).filter((d): d is K8sObject => d !== null);
const readKustomization = (dir: string): Kustomization => load(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
const literals = (k: Kustomization, configMap = 'herald-config'): Record<string, string> =>
  Object.fromEntries(
    (k.configMapGenerator ?? [])
      .filter((g) => g.name === configMap)
      .flatMap((g) => g.literals ?? [])
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

const baseObjects = (): K8sObject[] => readKustomization(join(K8S, 'base')).resources.flatMap((file) => readYaml(join(K8S, 'base', file)));
const overlayDirs = (): string[] =>
  readdirSync(join(K8S, 'overlays'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

/** Each overlay as `kubectl kustomize` renders it, once per run. */
const renders = new Map<string, Promise<K8sObject[]>>();
const rendered = (region: string): Promise<K8sObject[]> => {
  if (!renders.has(region)) renders.set(region, render(join(K8S, 'overlays', region)));
  return renders.get(region)!;
};

/** What `herald-secrets` carries in every region whatever its databases (deploy/README.md). */
const SECRETS = {
  REDIS_URL: 'redis://redis:6379',
  DKIM_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  AUTH_SECRET: 'k'.repeat(64),
};
const CONTROL_DATABASE = 'postgres://herald:pw@db.global.internal:5432/herald';
const databaseOf = (region: string) => `postgres://herald:pw@db.${region}.internal:5432/herald`;
/**
 * `herald-secrets` of a region's namespace when each region's email plane is a database of its own
 * (deploy/README.md, "Two regions, step by step", step 4): DATABASE_URL the region's own,
 * CONTROL_DATABASE_URL the global one, REGION_DATABASE_URLS the other regions'.
 */
const regionalSecret = (region: string, regions: string[]): Record<string, string> => ({
  ...SECRETS,
  DATABASE_URL: databaseOf(region),
  CONTROL_DATABASE_URL: CONTROL_DATABASE,
  REGION_DATABASE_URLS: regions
    .filter((r) => r !== region)
    .map((r) => `${r}=${databaseOf(r)}`)
    .join(','),
  REDIS_REGION: 'us-east-1',
});
/** loadConfig's refusal of `env`, one line per problem (none when it boots). */
const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

/**
 * The environment of a rendered Job's or Deployment's container as the kubelet builds it from
 * `envFrom` (a later source wins) then `env`: the rendered ConfigMaps' data and `secret` as
 * `herald-secrets`.
 */
function containerEnv(objects: K8sObject[], c: Container & { env?: { name: string; value?: string }[] }, secret: Record<string, string>) {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === from.configMapRef!.name)!.data);
    if (from.secretRef?.name === 'herald-secrets') Object.assign(env, secret);
  }
  for (const v of c.env ?? []) if (v.value !== undefined) env[v.name] = v.value;
  return env;
}

/** What `herald migrate` migrates with this environment (apps/cli main.ts: migrateAll over heraldDatabases): each database and what it holds. */
const migratedBy = (env: Record<string, string>) => heraldDatabases(loadConfig(env)).map((d) => ({ database: d.url, holds: d.holds }));

const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const podSpecOf = (o: K8sObject) => o.spec.template.spec;
const containersOf = (o: K8sObject): Container[] => podSpecOf(o).containers;
const portNumber = (c: Container, port: string | number): number | undefined =>
  typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;
const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The rules every region's set of objects must keep, rendered or not. */
function checkRegion(objects: K8sObject[]): void {
  const deployments = ofKind(objects, 'Deployment');
  expect(deployments.map((d) => containersOf(d)[0].args?.[0]).sort()).toEqual([...ROLES].sort());

  for (const d of deployments) {
    const [c, ...others] = containersOf(d);
    const role = c.args?.[0] ?? '';
    const where = `${d.metadata.name} (${role})`;
    expect({ where, others: others.length }).toEqual({ where, others: 0 });
    expect(ROLES).toContain(role);
    expect(d.spec.template.metadata.labels['app.kubernetes.io/component']).toBe(role);
    expect({ where, image: c.image, pinned: isPinned(c.image) }).toEqual({ where, image: c.image, pinned: true });

    const healthPort = role === 'api' ? 3000 : 9464;
    expect({ where, ready: c.readinessProbe?.httpGet?.path, live: c.livenessProbe?.httpGet?.path }).toEqual({
      where,
      ready: '/health/ready',
      live: '/health/live',
    });
    expect(portNumber(c, c.readinessProbe!.httpGet!.port)).toBe(healthPort);
    expect(portNumber(c, c.livenessProbe!.httpGet!.port)).toBe(healthPort);
    const annotations = d.spec.template.metadata.annotations ?? {};
    expect({ where, scrape: annotations['prometheus.io/scrape'], port: annotations['prometheus.io/port'] }).toEqual({
      where,
      scrape: 'true',
      port: '9464',
    });

    for (const kind of ['requests', 'limits'] as const) {
      expect({ where, kind, cpu: !!c.resources?.[kind]?.cpu, memory: !!c.resources?.[kind]?.memory }).toEqual({
        where,
        kind,
        cpu: true,
        memory: true,
      });
    }
    expect(c.envFrom?.some((e) => e.configMapRef?.name.startsWith('herald-config'))).toBe(true);
    expect(c.envFrom?.some((e) => e.secretRef?.name === 'herald-secrets')).toBe(true);
    expect(podSpecOf(d).securityContext?.runAsNonRoot).toBe(true);
    if (DRAINING_ROLES.includes(role)) expect(podSpecOf(d).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(120);

    const labels = d.spec.template.metadata.labels;
    expect(ofKind(objects, 'PodDisruptionBudget').filter((p) => matches(p.spec.selector.matchLabels, labels))).toHaveLength(1);
  }

  const hpaTargets = ofKind(objects, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name);
  const byRole = (role: string) => deployments.find((d) => containersOf(d)[0].args?.[0] === role)!;
  for (const role of ['api', 'worker']) {
    expect(hpaTargets).toContain(byRole(role).metadata.name);
    // A replica count in the Deployment would fight the autoscaler on every apply.
    expect(byRole(role).spec.replicas).toBeUndefined();
  }

  const services = ofKind(objects, 'Service');
  const api = services.find((s) => matches(s.spec.selector, byRole('api').spec.template.metadata.labels));
  expect(api?.spec.ports.map((p: { port: number }) => p.port)).toEqual([3000, 3001]);
  const smtpDeployment = byRole('smtp');
  // The relay's Service (herald-bounce-mx selects the same pods for port 25 of its own address).
  const smtp = services.find((s) => s.metadata.name === 'herald-smtp' && matches(s.spec.selector, smtpDeployment.spec.template.metadata.labels));
  expect(smtp?.spec.type).toBe('LoadBalancer');
  expect(smtp?.spec.ports.map((p: { port: number }) => p.port)).toEqual(SMTP_PORTS);
  for (const p of smtp?.spec.ports ?? []) expect(portNumber(containersOf(smtpDeployment)[0], p.targetPort)).toBe(p.port);

  const [migrate, ...moreJobs] = ofKind(objects, 'Job');
  expect(moreJobs).toHaveLength(0);
  expect(containersOf(migrate)[0].args).toEqual(['migrate']);
  expect(isPinned(containersOf(migrate)[0].image)).toBe(true);
}

describe('k8s manifests', () => {
  it("pins every image, never to latest, and Herald's roles to one image", () => {
    expect(isPinned('ghcr.io/herald-email/herald:0.1.0')).toBe(true);
    expect(isPinned(`registry:5000/herald@sha256:${'a'.repeat(64)}`)).toBe(true);
    expect(isPinned('ghcr.io/herald-email/herald:latest')).toBe(false);
    expect(isPinned('registry:5000/herald')).toBe(false);
    const containers = baseObjects().flatMap((o) => (o.spec?.template ? containersOf(o) : []));
    expect(new Set(containers.filter((c) => c.name === 'herald').map((c) => c.image)).size).toBe(1);
    for (const c of containers) expect({ image: c.image, pinned: isPinned(c.image) }).toEqual({ image: c.image, pinned: true });
    const kustomization = load(readFileSync(join(K8S, 'base', 'kustomization.yaml'), 'utf8')) as {
      images: { name: string; newTag?: string; digest?: string }[];
    };
    for (const i of kustomization.images) expect(isPinned(i.digest ? `${i.name}@${i.digest}` : `${i.name}:${i.newTag}`)).toBe(true);
  });

  it('base: every role has probes, resources, a pinned image, a budget; api and worker autoscale', () => {
    checkRegion(baseObjects());
  });

  it.each(REGIONS)('%s: the rendered overlay keeps the same rules', async (region) => {
    checkRegion(await rendered(region));
  });

  it.each(REGIONS)(
    "%s: the migrate Job, with each region's email plane in a database of its own, migrates the control database, the region's own and the others'",
    async (region) => {
      const objects = await rendered(region);
      const [job] = ofKind(objects, 'Job');
      const [container] = containersOf(job);
      expect(container.args).toEqual(['migrate']);
      const env = containerEnv(objects, container, regionalSecret(region, REGIONS));
      // The rendered ConfigMap, whose generated name carries a hash, holds the overlay's region.
      expect(container.envFrom?.[0].configMapRef?.name).toMatch(/^herald-config-[a-z0-9]{10}$/);
      expect(env.HERALD_REGION).toBe(region);
      expect(migratedBy(env)).toEqual([
        { database: CONTROL_DATABASE, holds: ['control'] },
        ...REGIONS.map((r) => ({ database: databaseOf(r), holds: [r] })),
      ]);
    },
  );

  it("has one overlay per region, each setting its own region and namespace, and its NATS cluster's region", () => {
    const dirs = overlayDirs();
    expect([...dirs].sort()).toEqual([...REGIONS].sort());
    const base = literals(readKustomization(join(K8S, 'base')));
    // HERALD_REGIONS is the one list of served regions: each has an overlay, so its worker and
    // webhooks run (POST /domains accepts exactly these).
    expect(base.HERALD_REGIONS.split(',').sort()).toEqual([...dirs].sort());
    const seen = new Set<string>();
    for (const dir of dirs) {
      const overlay = readKustomization(join(K8S, 'overlays', dir));
      const settings = literals(overlay);
      expect({ dir, region: settings.HERALD_REGION, namespace: overlay.namespace }).toEqual({
        dir,
        region: dir,
        namespace: `herald-${dir}`,
      });
      // kustomize 2.0 (Debian's kubectl) reads a directory only under `bases:`.
      expect(overlay.bases).toEqual(['../../base']);
      for (const name of ['herald-config', 'nats-config']) expect(overlay.configMapGenerator?.find((g) => g.name === name)?.behavior).toBe('merge');
      expect(literals(overlay, 'nats-config')).toEqual({ REGION: dir });
      // The region's own NATS cluster, the `nats` Service of the namespace (k8s-nats.e2e-spec.ts follows it there).
      expect({ ...base, ...settings }.NATS_URL).toBe('nats://nats:4222');
      seen.add(settings.HERALD_REGION);
      // The merged ConfigMap, plus the Secret's keys (herald-secrets), is a configuration Herald boots with.
      // One database for every region and the control plane.
      const config = loadConfig({ ...base, ...settings, ...SECRETS, DATABASE_URL: 'postgres://h@db/herald' });
      expect(config.HERALD_REGION).toBe(dir);
      // Each region's email plane in a database of its own: the region's Secret names its own, the
      // control database and every other served region's.
      const regional = loadConfig({ ...base, ...settings, ...regionalSecret(dir, base.HERALD_REGIONS.split(',')) });
      expect({ dir, region: regional.HERALD_REGION, control: regional.CONTROL_DATABASE_URL, own: regional.DATABASE_URL }).toEqual({
        dir,
        region: dir,
        control: CONTROL_DATABASE,
        own: databaseOf(dir),
      });
    }
    expect(seen.size).toBe(REGIONS.length);
  });

  it("boots deploy/README.md's two regions, each region's email plane in its own database, and both agree on which holds what", () => {
    const base = literals(readKustomization(join(K8S, 'base')));
    const two = ['us-east-1', 'eu-west-1'];
    const views = two.map((region) => {
      const settings = literals(readKustomization(join(K8S, 'overlays', region)));
      const other = two.find((r) => r !== region)!;
      // Step 1: HERALD_REGIONS=us-east-1,eu-west-1. Step 4: each region's herald-secrets.
      const env = { ...base, HERALD_REGIONS: two.join(','), ...settings, ...regionalSecret(region, two) };
      expect({ region, problems: problems(env) }).toEqual({ region, problems: [] });
      expect(loadConfig(env).REGION_DATABASE_URLS).toEqual({ [other]: databaseOf(other) });
      return migratedBy(env);
    });
    const expected = [
      { database: CONTROL_DATABASE, holds: ['control'] },
      { database: databaseOf('us-east-1'), holds: ['us-east-1'] },
      { database: databaseOf('eu-west-1'), holds: ['eu-west-1'] },
    ];
    expect(views).toEqual([expected, expected]);

    // Step 1 forgotten (the base's four regions) with those two-region Secrets: sa-east-1's and
    // ap-northeast-1's emails would be stored in the accepting region's own database. Refused.
    const settings = literals(readKustomization(join(K8S, 'overlays', 'us-east-1')));
    const refused = problems({ ...base, ...settings, ...regionalSecret('us-east-1', two) });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(
      /^REGION_DATABASE_URLS: names no database for sa-east-1, ap-northeast-1 \(served: HERALD_REGIONS\)\. With CONTROL_DATABASE_URL apart, DATABASE_URL is us-east-1's own email plane/,
    );
    expect(refused[0]).not.toContain(':pw@');
  });

  it('refuses a malformed REGION_DATABASE_URLS in herald-secrets, saying what is wrong, never its passwords', () => {
    const base = literals(readKustomization(join(K8S, 'base')));
    const settings = literals(readKustomization(join(K8S, 'overlays', 'us-east-1')));
    const secret = regionalSecret('us-east-1', REGIONS);
    const boot = (REGION_DATABASE_URLS: string) => problems({ ...base, ...settings, ...secret, REGION_DATABASE_URLS });
    const others = secret.REGION_DATABASE_URLS;
    expect(boot(`${others},ap-south-1=${databaseOf('ap-south-1')}`)).toEqual([
      `REGION_DATABASE_URLS: names a region that is not in HERALD_REGIONS (got "${others.replaceAll(':pw@', ':***@')},ap-south-1=${databaseOf('ap-south-1').replace(':pw@', ':***@')}")`,
    ]);
    expect(boot(others.replace(databaseOf('eu-west-1'), 'db.eu-west-1.internal:5432/herald'))).toEqual([
      'REGION_DATABASE_URLS.eu-west-1: must be a URL with protocol postgres: or postgresql:',
    ]);
    // Separated by semicolons: one URL, eu-west-1's, and no database for the two regions after it.
    expect(boot(others.replaceAll(',', ';'))).toEqual([
      'REGION_DATABASE_URLS.eu-west-1: holds more than one URL: separate region=url pairs with commas',
      expect.stringMatching(/^REGION_DATABASE_URLS: names no database for sa-east-1, ap-northeast-1 /),
    ]);
    expect(boot(`${others},eu-west-1=${databaseOf('us-east-1')}`)).toEqual([
      expect.stringMatching(/^REGION_DATABASE_URLS: names eu-west-1 twice \(got ".*:\*\*\*@.*"\)$/),
    ]);
    expect(boot(databaseOf('eu-west-1'))[0]).toMatch(
      /^REGION_DATABASE_URLS: "postgres:\/\/herald:\*\*\*@db\.eu-west-1\.internal:5432\/herald" is not region=value/,
    );
    // No message shows a password.
    expect(boot(databaseOf('eu-west-1')).join('\n')).not.toContain(':pw@');
  });

  it('sets only variables that Herald reads', () => {
    const known = Object.keys(configSchema.shape);
    const keys = [K8S + '/base', ...overlayDirs().map((d) => join(K8S, 'overlays', d))].flatMap((dir) =>
      Object.keys(literals(readKustomization(dir))),
    );
    expect(keys.filter((k) => !known.includes(k))).toEqual([]);
  });
});
