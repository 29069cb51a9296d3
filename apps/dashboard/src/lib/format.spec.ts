import { auditAction, auditDetail, dayBound, deviceName, observedText, readableSubject, statusLabel, toneOf, usagePercent } from './format';

describe('status badges', () => {
  it('colours a status by what it means and always has words for it', () => {
    expect(toneOf('verified')).toBe('green');
    expect(toneOf('DELIVERED')).toBe('green');
    expect(toneOf('bounced')).toBe('red');
    expect(toneOf('delivery_delayed')).toBe('orange');
    expect(toneOf('something_new')).toBe('gray');
    expect(toneOf(undefined)).toBe('gray');
    expect(statusLabel('delivery_delayed')).toBe('delivery delayed');
    expect(statusLabel(null)).toBe('unknown');
  });
});

describe('usagePercent', () => {
  it('is the share of the quota, capped at 100, and 0 without a quota', () => {
    expect(usagePercent(250, 1000)).toBe(25);
    expect(usagePercent(1, 3)).toBe(33.3);
    expect(usagePercent(5000, 1000)).toBe(100);
    expect(usagePercent(5, null)).toBe(0);
    expect(usagePercent(5, 0)).toBe(0);
  });
});

describe('observedText', () => {
  it('says what DNS answered, nothing yet, or no record', () => {
    expect(observedText(['v=spf1 include:herald.test ~all'])).toBe('v=spf1 include:herald.test ~all');
    expect(observedText(['10 mx1.herald.test', '20 mx2.herald.test'])).toBe('10 mx1.herald.test · 20 mx2.herald.test');
    expect(observedText([])).toBe('no record');
    expect(observedText(null)).toBe('nothing yet');
  });
});

describe('dayBound', () => {
  it("turns a date input's day into the instants that start and end it, in the local zone", () => {
    const start = new Date(dayBound('2026-03-01')!);
    const end = new Date(dayBound('2026-03-01', true)!);
    expect([start.getFullYear(), start.getMonth(), start.getDate(), start.getHours()]).toEqual([2026, 2, 1, 0]);
    expect([end.getFullYear(), end.getMonth(), end.getDate(), end.getHours()]).toEqual([2026, 2, 2, 0]);
  });

  it('ignores an empty or malformed day', () => {
    expect(dayBound('')).toBeUndefined();
    expect(dayBound('2026-3-1')).toBeUndefined();
    expect(dayBound('2026-13-45')).toBeUndefined();
  });
});

describe('deviceName', () => {
  it('names the browser and the system of a session', () => {
    expect(deviceName('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36')).toBe(
      'Chrome 156 on Linux',
    );
    expect(
      deviceName('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0'),
    ).toBe('Edge 140 on Windows');
    expect(
      deviceName(
        'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
      ),
    ).toBe('Safari 17 on iOS');
    expect(deviceName('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Mobile Safari/537.36')).toBe(
      'Chrome 141 on Android',
    );
  });

  it('keeps an agent it does not know, shortened, and says when there is none', () => {
    expect(deviceName('node')).toBe('node');
    expect(deviceName('x'.repeat(60))).toBe(`${'x'.repeat(47)}…`);
    expect(deviceName(null)).toBe('Unknown device');
    expect(deviceName('  ')).toBe('Unknown device');
  });
});

describe('audit log entries', () => {
  it('names each action in words and keeps an unknown one as it came', () => {
    expect(auditAction('api_key.created')).toBe('Created an API key');
    expect(auditAction('user.signed_in')).toBe('Signed in');
    expect(auditAction('domain.exploded')).toBe('domain.exploded');
  });

  it('shows the details a person reads, without ids or the route', () => {
    expect(auditDetail({ api_key_id: '0190a1b2', name: 'Production', permission: 'full_access' })).toBe('name: Production · permission: full access');
    expect(auditDetail({ method: 'password+2fa', path: '/sign-in/email' })).toBe('method: password+2fa');
    expect(auditDetail({ from: 'member', to: 'admin', user_id: 'u1' })).toBe('from: member · to: admin');
    expect(auditDetail({})).toBe('');
    expect(auditDetail(null)).toBe('');
  });
});

describe("a broadcast's subject in a list", () => {
  it('names the field of each merge tag instead of showing its syntax', () => {
    expect(readableSubject('Spring news for {{{contact.first_name|friend}}}')).toBe('Spring news for ‹first name›');
    expect(readableSubject('{{{ contact.company }}} × {{{member_number|none}}}: hi')).toBe('‹company› × ‹member number›: hi');
    expect(readableSubject('No tags {here}')).toBe('No tags {here}');
  });
});
