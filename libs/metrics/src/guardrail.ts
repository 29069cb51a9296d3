import type { DomainPause } from '@herald/domains';
import type { Counts } from './rollup-counts';

/** The guardrail judges the last 24 hourly rollups (the current hour and the 23 before it). */
export const GUARDRAIL_WINDOW_HOURS = 24;

export interface GuardrailLimits {
  bounceRate: number;
  complaintRate: number;
  minSent: number;
}

/** bounced / sent, the unit of both being recipients; null before anything was sent. */
export const bounceRate = (c: Pick<Counts, 'sent' | 'bounced_hard' | 'bounced_soft'>): number | null =>
  c.sent > 0 ? (c.bounced_hard + c.bounced_soft) / c.sent : null;

/** complained / delivered, as Gmail and Yahoo measure it; null before anything was delivered. */
export const complaintRate = (c: Pick<Counts, 'delivered' | 'complained'>): number | null => (c.delivered > 0 ? c.complained / c.delivered : null);

export const deliveryRate = (c: Pick<Counts, 'sent' | 'delivered'>): number | null => (c.sent > 0 ? c.delivered / c.sent : null);

/**
 * The pause a domain's window calls for, or null: a rate that passes (is above) its limit, once
 * the domain sent to enough recipients for the rate to mean something. Bounces are judged first.
 */
export function judge(window: Counts, limits: GuardrailLimits): DomainPause | null {
  if (window.sent < limits.minSent) return null;
  const base = { sent: window.sent, windowHours: GUARDRAIL_WINDOW_HOURS };
  const bounces = bounceRate(window) ?? 0;
  if (bounces > limits.bounceRate) return { reason: 'bounce_rate', rate: bounces, threshold: limits.bounceRate, ...base };
  const complaints = complaintRate(window) ?? 0;
  if (complaints > limits.complaintRate) return { reason: 'complaint_rate', rate: complaints, threshold: limits.complaintRate, ...base };
  return null;
}
