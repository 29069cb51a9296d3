import { HeraldError } from '@herald/core';
import { accept, reject, type Validated } from './validation.types';

/*
 * `scheduled_at` accepts what Resend documents, in this subset (case-insensitive, UTC):
 *   ISO 8601    2026-08-05T11:52:01.858Z, 2026-08-05T13:52+02:00, 2026-08-05 11:52:01+0000,
 *               Resend's own REST format 2026-08-05 11:52:01.858000+00 (so a GET result can be
 *               sent back), a date alone (midnight) or a time without zone (both read as UTC)
 *   relative    "now", "in 1 min", "in 2 hours", "in 3 days", "in an hour", "in 1 week"
 *               (units: s/sec/second, m/min/minute, h/hr/hour, d/day, w/week; plurals allowed)
 *   day + time  "today at 5pm", "tomorrow at 9am", "tomorrow at 9:30 am", "tomorrow at 14:30",
 *               "tomorrow at noon", "tomorrow at midnight" (the word "at" is optional)
 * Anything else is rejected rather than guessed at: a mis-scheduled email cannot be recalled.
 */

/** Clients stamp "now" before the request travels; that small lag is not "in the past". */
const PAST_TOLERANCE_MS = 60_000;
const DAY_MS = 86_400_000;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const RELATIVE = /^in\s+(?:(\d{1,6})\s*|(?:an?|one)\s+)([a-z]+)$/;
const DAY_AT = /^(today|tomorrow)\s+(?:at\s+)?(?:(noon|midnight)|(\d{1,2})(?::(\d{2}))?\s*(am|pm)?)$/;
// A Map, not an object literal: "in 1 constructor" must not find Object.prototype.
const UNIT_MS = new Map<string, number>(
  Object.entries({
    s: 1000,
    sec: 1000,
    secs: 1000,
    second: 1000,
    seconds: 1000,
    m: 60_000,
    min: 60_000,
    mins: 60_000,
    minute: 60_000,
    minutes: 60_000,
    h: 3_600_000,
    hr: 3_600_000,
    hrs: 3_600_000,
    hour: 3_600_000,
    hours: 3_600_000,
    d: DAY_MS,
    day: DAY_MS,
    days: DAY_MS,
    w: 7 * DAY_MS,
    week: 7 * DAY_MS,
    weeks: 7 * DAY_MS,
  }),
);

const invalid = (detail: string): Validated<never> => reject(new HeraldError('validation_error', `Invalid \`scheduled_at\` field. ${detail}`));

export function parseScheduledAt(value: unknown, now: Date, maxDays: number): Validated<Date> {
  const text = typeof value === 'string' ? value.trim().toLowerCase().replace(/\s+/g, ' ') : null;
  const date = text === null ? null : text === 'now' ? new Date(now) : (parseIso(text) ?? parseNatural(text, now));
  if (date === null || Number.isNaN(date.getTime())) {
    return invalid('Use an ISO 8601 date such as `2026-08-05T11:52:01.858Z` or natural language such as `in 1 min` or `tomorrow at 9am`.');
  }
  if (date.getTime() < now.getTime() - PAST_TOLERANCE_MS) return invalid('The date must be in the future.');
  if (date.getTime() > now.getTime() + maxDays * DAY_MS) {
    return invalid(`Emails can be scheduled at most ${maxDays} day${maxDays === 1 ? '' : 's'} in advance.`);
  }
  return accept(date);
}

function parseIso(text: string): Date | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((p) => Number(p ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = parseOffset(m[8]);
  if (offset === null || hour > 23 || minute > 59 || second > 59) return null;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC rolls 2026-02-30 over to March; a date that does not exist is a typo, not a wish.
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  return new Date(utc - offset * 60_000);
}

/** Minutes east of UTC; absent means UTC, as documented for Herald. */
function parseOffset(zone: string | undefined): number | null {
  if (zone === undefined || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 23 || minutes > 59 || (digits.length !== 2 && digits.length !== 4)) return null;
  return sign * (hours * 60 + minutes);
}

function parseNatural(text: string, now: Date): Date | null {
  const relative = RELATIVE.exec(text);
  if (relative) {
    const unit = UNIT_MS.get(relative[2] ?? '');
    const count = relative[1] === undefined ? 1 : Number(relative[1]);
    return unit === undefined ? null : new Date(now.getTime() + count * unit);
  }
  const dayAt = DAY_AT.exec(text);
  if (!dayAt) return null;
  const time = clockTime(dayAt[2], dayAt[3], dayAt[4], dayAt[5]);
  if (time === null) return null;
  const dayOffset = dayAt[1] === 'tomorrow' ? 1 : 0;
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + dayOffset, time.hour, time.minute));
}

function clockTime(
  word: string | undefined,
  hourText: string | undefined,
  minuteText: string | undefined,
  meridiem: string | undefined,
): { hour: number; minute: number } | null {
  if (word) return { hour: word === 'noon' ? 12 : 0, minute: 0 };
  const hour = Number(hourText);
  const minute = Number(minuteText ?? 0);
  if (minute > 59) return null;
  if (!meridiem) return hour <= 23 ? { hour, minute } : null;
  if (hour < 1 || hour > 12) return null;
  return { hour: (hour % 12) + (meridiem === 'pm' ? 12 : 0), minute };
}
