import { heraldBounce } from '../bounce-classification';
import type { Bounce } from '../delivery.types';

/** What a test address stands for (Resend's `delivered@resend.dev` and friends). */
export type TestAddressOutcome = { kind: 'delivered' } | { kind: 'bounced'; bounce: Bounce } | { kind: 'complained' } | { kind: 'suppressed' };

/** The `mx` recorded for a simulated delivery. */
export const TEST_ADDRESS_MX = 'test-addresses.herald.internal';

/**
 * The outcome a test address simulates, or null for an address outside the test domains. `delivered`, `bounced` and
 * `complained` take a `+label` (`delivered+signup@herald.test`) so tests can tell their emails
 * apart; `suppressed` does not, as at Resend. Test addresses never reach the network and never
 * join the suppression list themselves.
 */
export function testAddressOutcome(address: string, testDomains: readonly string[]): TestAddressOutcome | null {
  const at = address.lastIndexOf('@');
  const domain = address.slice(at + 1).toLowerCase();
  if (!testDomains.includes(domain)) return null;
  const local = address.slice(0, at).toLowerCase();
  const base = local.split('+')[0];
  switch (base) {
    case 'delivered':
      return { kind: 'delivered' };
    case 'complained':
      return { kind: 'complained' };
    case 'bounced':
      return {
        kind: 'bounced',
        bounce: heraldBounce(
          'Permanent',
          'General',
          "The recipient's email provider sent a hard bounce message.",
          `smtp; 550 5.1.1 <${address}>: Recipient address rejected: test address`,
        ),
      };
    case 'suppressed':
      if (local === 'suppressed') return { kind: 'suppressed' };
      return unknown(address);
    default:
      return unknown(address);
  }
}

/** Any other address at a test domain bounces: mail for a test domain never leaves the machine. */
function unknown(address: string): TestAddressOutcome {
  return {
    kind: 'bounced',
    bounce: heraldBounce(
      'Permanent',
      'NoEmail',
      'This test domain has only delivered@, bounced@, complained@ and suppressed@.',
      `smtp; 550 5.1.1 <${address}>: no such test address`,
    ),
  };
}
