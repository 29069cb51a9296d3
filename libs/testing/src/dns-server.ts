import { AddressInfo } from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;
type Resource = dns2.Packet.Resource;
type Send = (response: dns2.Packet) => unknown;

export interface MxValue {
  exchange: string;
  priority: number;
}

/** What each record type holds in the zone. A TXT value may be given pre-split into strings. */
export interface ZoneValues {
  TXT: (string | string[])[];
  MX: MxValue[];
  A: string[];
  AAAA: string[];
  CNAME: string[];
}
export type ZoneRecordType = keyof ZoneValues;

const TYPE_CODES: Record<ZoneRecordType, number> = {
  TXT: Packet.TYPE.TXT,
  MX: Packet.TYPE.MX,
  A: Packet.TYPE.A,
  AAAA: Packet.TYPE.AAAA,
  CNAME: Packet.TYPE.CNAME,
};
const TYPE_NAMES = new Map<number, ZoneRecordType>(Object.entries(TYPE_CODES).map(([name, code]) => [code, name as ZoneRecordType]));
/** RFC 1035 §4.1.1 (dns2's typings omit Packet.RCODE). */
const RCODE = { FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3 } as const;
const MAX_CHARACTER_STRING = 255;
const MAX_CNAME_CHAIN = 8;
/** Zero: resolvers (and c-ares' own cache) must ask again, so a test sees its zone edits at once. */
const TTL = 0;

const canonical = (name: string): string => name.toLowerCase().replace(/\.$/, '');

/**
 * RFC 1035 §3.3.14: one TXT record is a list of character-strings of at most 255 bytes each.
 * dns2 3.0.0 does not split a long string itself (a single long string breaks DKIM keys).
 */
export function splitTxt(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length <= MAX_CHARACTER_STRING) return [value];
  const chunks: string[] = [];
  for (let at = 0; at < bytes.length; at += MAX_CHARACTER_STRING) {
    chunks.push(bytes.subarray(at, at + MAX_CHARACTER_STRING).toString('utf8'));
  }
  return chunks;
}

/**
 * A local authoritative DNS server for tests (dns2), on UDP and TCP at the same random port of
 * 127.0.0.1, so that a resolver retries a truncated UDP answer over TCP. The zone is mutable while
 * it runs: unknown names are NXDOMAIN, known names without the asked type are NODATA, stalled
 * names are never answered (the resolver times out) and failing names get SERVFAIL.
 */
export class TestDnsServer {
  private readonly zone = new Map<string, Map<ZoneRecordType, unknown[]>>();
  private readonly stalled = new Set<string>();
  private readonly failing = new Set<string>();
  /** Every question received, for assertions (`name TYPE`). */
  readonly queries: string[] = [];

  private constructor(
    private readonly udp: dns2.UDPServer,
    private readonly tcp: dns2.TCPServer,
    private readonly port: number,
  ) {}

  static async start(): Promise<TestDnsServer> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await TestDnsServer.listen();
      } catch (error) {
        // The random UDP port may be taken on TCP; pick another pair.
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw error;
      }
    }
  }

  private static async listen(): Promise<TestDnsServer> {
    let server: TestDnsServer | null = null;
    const handle = (request: dns2.Packet, send: Send) => server?.answer(request, send);
    const udp = dns2.createUDPServer((request, send) => handle(request, send));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve());
    });
    const { port } = udp.address();
    const tcp = dns2.createTCPServer((request, send) => handle(request, send));
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => resolve());
      });
    } catch (error) {
      udp.close();
      throw error;
    }
    udp.on('error', () => undefined);
    tcp.on('error', () => undefined);
    server = new TestDnsServer(udp, tcp, (tcp.address() as AddressInfo).port);
    return server;
  }

  /** `127.0.0.1:port`, as DNS_SERVERS takes it. */
  address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Replaces the records of one type at a name (an empty list keeps the name, answering NODATA). */
  set<T extends ZoneRecordType>(name: string, type: T, values: ZoneValues[T]): this {
    const key = canonical(name);
    const types = this.zone.get(key) ?? new Map<ZoneRecordType, unknown[]>();
    types.set(type, [...values]);
    this.zone.set(key, types);
    this.stalled.delete(key);
    this.failing.delete(key);
    return this;
  }

  /** Removes one type at a name, or the whole name (then NXDOMAIN). */
  remove(name: string, type?: ZoneRecordType): this {
    const key = canonical(name);
    if (type) this.zone.get(key)?.delete(type);
    else this.zone.delete(key);
    if (!type) {
      this.stalled.delete(key);
      this.failing.delete(key);
    }
    return this;
  }

  /** Questions for this name are never answered, so the resolver times out. */
  stall(name: string): this {
    this.stalled.add(canonical(name));
    return this;
  }

  /** Questions for this name get SERVFAIL. */
  servfail(name: string): this {
    this.failing.add(canonical(name));
    return this;
  }

  clear(): this {
    this.zone.clear();
    this.stalled.clear();
    this.failing.clear();
    this.queries.length = 0;
    return this;
  }

  async close(): Promise<void> {
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.tcp.close(() => resolve())),
    ]);
  }

  private answer(request: dns2.Packet, send: Send): void {
    const [question] = request.questions;
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    if (!question) {
      response.header.rcode = RCODE.FORMERR;
      void send(response);
      return;
    }
    const name = canonical(question.name);
    const type = TYPE_NAMES.get(question.type);
    this.queries.push(`${name} ${type ?? question.type}`);
    if (this.stalled.has(name)) return;
    if (this.failing.has(name)) {
      response.header.rcode = RCODE.SERVFAIL;
      void send(response);
      return;
    }
    if (!this.exists(name)) response.header.rcode = RCODE.NXDOMAIN;
    else if (type) response.answers.push(...this.resources(question.name, name, type));
    void send(response);
  }

  /** The records of a type at a name; a CNAME stands for the name and is followed inside the zone. */
  private resources(owner: string, name: string, type: ZoneRecordType, depth = 0): Resource[] {
    const types = this.zone.get(name);
    const values = types?.get(type);
    if (values?.length) return values.map((value) => resource(owner, type, value));
    const cname = type === 'CNAME' ? undefined : (types?.get('CNAME') as string[] | undefined)?.[0];
    if (!cname || depth >= MAX_CNAME_CHAIN) return [];
    return [resource(owner, 'CNAME', cname), ...this.resources(cname, canonical(cname), type, depth + 1)];
  }

  /** A name exists if it holds records or is an empty non-terminal above one that does (RFC 8020). */
  private exists(name: string): boolean {
    if (this.zone.has(name)) return true;
    const suffix = `.${name}`;
    for (const owner of this.zone.keys()) if (owner.endsWith(suffix)) return true;
    return false;
  }
}

function resource(name: string, type: ZoneRecordType, value: unknown): Resource {
  const base = { name, type: TYPE_CODES[type], class: Packet.CLASS.IN, ttl: TTL };
  switch (type) {
    case 'TXT':
      return { ...base, data: Array.isArray(value) ? (value as string[]) : splitTxt(value as string) } as Resource;
    case 'MX': {
      const mx = value as MxValue;
      return { ...base, exchange: mx.exchange, priority: mx.priority } as Resource;
    }
    case 'A':
    case 'AAAA':
      return { ...base, address: value as string } as Resource;
    case 'CNAME':
      return { ...base, domain: value as string } as Resource;
  }
}
