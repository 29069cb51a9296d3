import { addressAllowList, type AddressAllowList } from '@herald/core';
import { isbot } from 'isbot';

export type MachineReason = 'user_agent' | 'apple_privacy' | 'link_scanner';

export interface HitSource {
  ipAddress: string;
  userAgent: string;
  kind: 'open' | 'click';
  /** How long after the tracked message was signed (at delivery) the hit came. */
  sinceDeliveryMs: number;
}

export interface ClassifierOptions {
  /** TRACKING_APPLE_PROXY_RANGES. */
  appleProxyRanges: readonly string[];
  /** TRACKING_SCANNER_WINDOW_SECONDS. */
  scannerWindowSeconds: number;
}

/**
 * Webmail image proxies fetch the pixel when a person opens the message (Gmail, Yahoo): isbot
 * lists them as bots, but their opens are the person's.
 */
const OPENING_PROXIES = /GoogleImageProxy|YahooMailProxy/i;
/** Apple Mail Privacy Protection's prefetch sends exactly this user agent. */
const APPLE_PROXY_AGENT = 'Mozilla/5.0';
/**
 * User agents whose verdict is remembered: readers' mail clients and browsers are a few hundred
 * strings, and isbot's pattern is most of a hit's classification. Forgotten all at once when full.
 */
const REMEMBERED_AGENTS = 4096;

/**
 * Tells hits by machines from hits by people; machine hits are recorded and flagged, not dropped.
 * In order: Apple Mail Privacy Protection (its proxy prefetches every image of a message it
 * receives, opened or not: the bare `Mozilla/5.0` user agent, or an address in Apple's ranges),
 * a user agent isbot knows as a crawler, scanner or script (or none at all), and a click within
 * a few seconds of delivery (security gateways click every link of a message as it arrives).
 */
export class MachineClassifier {
  private readonly apple: AddressAllowList;
  private readonly machineAgents = new Map<string, boolean>();

  constructor(private readonly options: ClassifierOptions) {
    this.apple = withIpv4FastPath(options.appleProxyRanges, addressAllowList(options.appleProxyRanges));
  }

  reason(hit: HitSource): MachineReason | null {
    const agent = hit.userAgent.trim();
    if (agent === APPLE_PROXY_AGENT || (hit.ipAddress && this.apple(hit.ipAddress))) return 'apple_privacy';
    if (!agent || this.isMachineAgent(agent)) return 'user_agent';
    if (hit.kind === 'click' && hit.sinceDeliveryMs < this.options.scannerWindowSeconds * 1000) return 'link_scanner';
    return null;
  }

  private isMachineAgent(agent: string): boolean {
    let machine = this.machineAgents.get(agent);
    if (machine === undefined) {
      machine = isbot(agent) && !OPENING_PROXIES.test(agent);
      if (this.machineAgents.size >= REMEMBERED_AGENTS) this.machineAgents.clear();
      this.machineAgents.set(agent, machine);
    }
    return machine;
  }
}

const IPV4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/i;

/**
 * The IPv4 ranges of `entries` checked as numbers, before `general` (net.BlockList, which builds a
 * SocketAddress per check: most of a hit's classification). IPv6 addresses go to `general`.
 */
function withIpv4FastPath(entries: readonly string[], general: AddressAllowList): AddressAllowList {
  const ranges: { base: number; mask: number }[] = [];
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const base = ipv4Number(address);
    if (base === null) continue;
    const bits = prefix === undefined ? 32 : Number(prefix);
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    ranges.push({ base: (base & mask) >>> 0, mask });
  }
  return (raw) => {
    const address = ipv4Number(raw);
    if (address === null) return general(raw);
    return ranges.some((r) => (address & r.mask) >>> 0 === r.base);
  };
}

function ipv4Number(address: string): number | null {
  const m = IPV4.exec(address);
  if (!m) return null;
  const octets = [m[1], m[2], m[3], m[4]].map(Number);
  if (octets.some((o) => o > 255)) return null;
  return ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
}
