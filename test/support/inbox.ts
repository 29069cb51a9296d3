import { freeSharedPort, MxSink, TestDnsServer } from '@herald/testing';

/**
 * Where the region suites' recipients' mail goes: a local DNS server whose `inbox.test` MX is
 * `mx.inbox.test` at `host`, and an MX sink there on a free port (the roles' DELIVERY_PORT).
 */
export async function startInbox(host: string): Promise<{ dns: TestDnsServer; sink: MxSink; port: number }> {
  const dns = await TestDnsServer.start();
  const port = await freeSharedPort([host]);
  const sink = await MxSink.start({ host, port });
  dns.set('inbox.test', 'MX', [{ exchange: 'mx.inbox.test', priority: 10 }]).set('mx.inbox.test', 'A', [host]);
  return { dns, sink, port };
}
