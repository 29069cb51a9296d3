import { editDistance, likelyIntendedDomain, providerOf } from './known-names';

describe('likelyIntendedDomain', () => {
  it.each([
    ['gmial.com', 'gmail.com'],
    ['gmai.com', 'gmail.com'],
    ['gnail.com', 'gmail.com'],
    ['gmail.con', 'gmail.com'],
    ['gmail.co', 'gmail.com'],
    ['hotmial.com', 'hotmail.com'],
    ['hotmail.cmo', 'hotmail.com'],
    ['yaho.com', 'yahoo.com'],
    ['yahooo.com', 'yahoo.com'],
    ['outlok.com', 'outlook.com'],
    ['iclod.com', 'icloud.com'],
    ['yahoo.co.uk', null],
    ['hotmial.co.uk', 'hotmail.co.uk'],
    ['comcast.nte', 'comcast.net'],
  ])('%s → %s', (domain, intended) => {
    expect(likelyIntendedDomain(domain)).toBe(intended);
  });

  it.each([
    'gmail.com',
    'mail.com',
    'email.com',
    'ymail.com',
    'live.ca',
    'hotmail.fr',
    'yahoo.de',
    'me.com',
    'mac.com',
    'qq.com',
    'q.com',
    'aol.de',
    'acme.com',
    'example.org',
    'googlemail.com',
    'gmx.de',
    'web.de',
  ])('leaves %s alone', (domain) => {
    expect(likelyIntendedDomain(domain)).toBeNull();
  });
});

describe('editDistance', () => {
  it('counts an adjacent transposition as one edit', () => {
    expect(editDistance('gmial', 'gmail')).toBe(1);
    expect(editDistance('gmail', 'gmail')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('providerOf', () => {
  it('names the provider behind an MX host, or gives the host back', () => {
    expect(providerOf('gmail-smtp-in.l.google.com')).toBe('Gmail / Google Workspace');
    expect(providerOf('acme-com.mail.protection.outlook.com.')).toBe('Microsoft (Outlook / Microsoft 365)');
    expect(providerOf('mta7.am0.yahoodns.net')).toBe('Yahoo');
    expect(providerOf('mx.inbox.test')).toBe('mx.inbox.test');
  });
});
