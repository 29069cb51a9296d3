import { join } from 'node:path';
import { networkProblems } from './k8s-network';
import { render } from './k8s-render';

const K8S = join(__dirname, '..', '..', 'k8s');
const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'];

/**
 * Each region's NetworkPolicies as `kubectl kustomize` renders them, judged port by port: the
 * public ports open, the ops and monitoring ports to the cluster only, NATS's clients to Herald's
 * pods only and its routes to its own servers, everything else closed. A broken overlay that
 * opens NATS to everyone is caught.
 */
describe('k8s: who reaches what in a region', () => {
  it.each(REGIONS)('%s: only the declared ports, each to the declared sources', async (region) => {
    expect(networkProblems(await render(join(K8S, 'overlays', region)))).toEqual([]);
  });

  it('catches an overlay that opens NATS to everyone', async () => {
    expect(networkProblems(await render(join(__dirname, 'fixtures', 'k8s-broken-nats')))).toEqual([
      'nats 4222 is open to a pod of another namespace',
      'nats 4222 is open to the internet',
      "nats 6222 is open to a Herald pod of the region's namespace",
      'nats 6222 is open to a pod of another namespace',
      'nats 6222 is open to the internet',
      'nats 8222 is open to the internet',
    ]);
  });
});
