import type { Domain, DomainPause } from './domain.types';

const percent = (rate: number): string => `${(Math.round(rate * 1000) / 10).toString()}%`;

const WHAT: Record<DomainPause['reason'], string> = { bounce_rate: 'bounce rate', complaint_rate: 'complaint rate' };

/** What a paused domain's refused send says: the reason, the rate, and how to get going again. */
export function pauseMessage(domain: Pick<Domain, 'id' | 'name'>, pause: DomainPause): string {
  const fix = pause.reason === 'bounce_rate' ? 'remove the addresses that bounce from your lists' : 'stop mailing the people who complain';
  return (
    `The ${domain.name} domain is paused for new sends: its ${WHAT[pause.reason]} over the last ${pause.windowHours} hours is ` +
    `${percent(pause.rate)} (limit ${percent(pause.threshold)}, ${pause.sent} recipients). To send again, ${fix}, ` +
    `then resume the domain (POST /domains/${domain.id}/resume or the dashboard's Domains page).`
  );
}
