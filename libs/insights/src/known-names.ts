/* The lists the rules compare against: URL shorteners, role mailboxes and the big mailbox providers. */

/** Public URL shorteners (youtu.be has a rule of its own). Spam filters distrust them: anyone can hide anything behind one. */
export const URL_SHORTENERS = new Set([
  'bit.ly',
  'bitly.com',
  'tinyurl.com',
  't.co',
  'goo.gl',
  'ow.ly',
  'is.gd',
  'v.gd',
  'buff.ly',
  'rebrand.ly',
  'cutt.ly',
  'shorturl.at',
  'tiny.cc',
  'rb.gy',
  'bit.do',
  't.ly',
  'lnkd.in',
  's.id',
  'soo.gd',
  'clck.ru',
  'shorte.st',
  'adf.ly',
  'qr.ae',
  'tr.im',
  'x.co',
  'mcaf.ee',
  'u.to',
  'tiny.one',
  'short.io',
  'bl.ink',
]);

/** Mailboxes of a function rather than a person (RFC 2142 and the usual shared ones). */
export const ROLE_LOCAL_PARTS = new Set([
  'postmaster',
  'abuse',
  'hostmaster',
  'webmaster',
  'noc',
  'security',
  'root',
  'admin',
  'administrator',
  'info',
  'support',
  'sales',
  'marketing',
  'billing',
  'help',
  'contact',
  'office',
  'team',
  'all',
  'everyone',
  'list',
  'listserv',
  'majordomo',
  'mailer-daemon',
  'usenet',
  'uucp',
  'news',
]);

/** Big mailbox providers' domains: a recipient domain a letter or two away from one is likely a typo. */
export const PROVIDER_DOMAINS = [
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'ymail.com',
  'rocketmail.com',
  'hotmail.com',
  'outlook.com',
  'live.com',
  'msn.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'mail.com',
  'email.com',
  'gmx.com',
  'gmx.net',
  'gmx.de',
  'web.de',
  'yandex.ru',
  'mail.ru',
  'proton.me',
  'protonmail.com',
  'zoho.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'qq.com',
  '163.com',
  'yahoo.co.uk',
  'hotmail.co.uk',
  'btinternet.com',
  'orange.fr',
  'free.fr',
  'libero.it',
  't-online.de',
];

/** Misspellings of `com`, `net` and friends that are not top-level domains anyone mails (or that nobody means). */
export const TLD_TYPOS: Record<string, string> = {
  con: 'com',
  cmo: 'com',
  ocm: 'com',
  cpm: 'com',
  vom: 'com',
  xom: 'com',
  comm: 'com',
  coom: 'com',
  cim: 'com',
  co: 'com',
  om: 'com',
  cm: 'com',
  nte: 'net',
  ent: 'net',
  nett: 'net',
  ne: 'net',
};

/** Mailbox providers by the MX hosts they answer from, to name who deferred a message. */
export const PROVIDERS_BY_MX: { suffix: string; name: string }[] = [
  { suffix: '.google.com', name: 'Gmail / Google Workspace' },
  { suffix: '.googlemail.com', name: 'Gmail / Google Workspace' },
  { suffix: '.outlook.com', name: 'Microsoft (Outlook / Microsoft 365)' },
  { suffix: '.hotmail.com', name: 'Microsoft (Outlook / Microsoft 365)' },
  { suffix: '.yahoodns.net', name: 'Yahoo' },
  { suffix: '.icloud.com', name: 'Apple iCloud' },
  { suffix: '.me.com', name: 'Apple iCloud' },
  { suffix: '.aol.com', name: 'AOL' },
  { suffix: '.gmx.net', name: 'GMX' },
  { suffix: '.web.de', name: 'WEB.DE' },
  { suffix: '.yandex.ru', name: 'Yandex' },
  { suffix: '.mail.ru', name: 'Mail.ru' },
  { suffix: '.protonmail.ch', name: 'Proton Mail' },
  { suffix: '.zoho.com', name: 'Zoho' },
  { suffix: '.pphosted.com', name: 'Proofpoint' },
  { suffix: '.mimecast.com', name: 'Mimecast' },
  { suffix: '.messagelabs.com', name: 'Broadcom MessageLabs' },
  { suffix: '.barracudanetworks.com', name: 'Barracuda' },
];

/** The provider behind an MX host, or the host itself. */
export function providerOf(mx: string): string {
  const host = `.${mx.toLowerCase().replace(/\.$/, '')}`;
  return PROVIDERS_BY_MX.find((p) => host.endsWith(p.suffix))?.name ?? mx;
}

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions, each edit once):
 * `gmial` is one edit from `gmail`.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}

/**
 * The provider domain a recipient domain was probably meant to be, or null. A known domain is
 * never a typo. Otherwise: the same top-level domain and a name of four letters or more one edit
 * away (two for names of six letters or more), or the same name with a misspelt `com`/`net`
 * (`gmail.con`).
 */
export function likelyIntendedDomain(domain: string): string | null {
  const lower = domain.toLowerCase();
  if (PROVIDER_DOMAINS.includes(lower)) return null;
  const { name, tld } = splitDomain(lower);
  for (const provider of PROVIDER_DOMAINS) {
    const intended = splitDomain(provider);
    if (name === intended.name && TLD_TYPOS[tld] === intended.tld) return provider;
    // Names of three letters or fewer (`qq`, `aol`, `me`) are a letter away from too many real domains.
    if (tld !== intended.tld || intended.name.length < 4) continue;
    const distance = editDistance(name, intended.name);
    if (distance > 0 && distance <= (intended.name.length >= 6 ? 2 : 1)) return provider;
  }
  return null;
}

/** `mail.yahoo.co.uk` → name `mail.yahoo`, tld `co.uk`; `gmail.com` → `gmail`, `com`. */
function splitDomain(domain: string): { name: string; tld: string } {
  const labels = domain.split('.');
  const tldLabels = labels.length >= 3 && labels.at(-2)!.length <= 3 && labels.at(-1)!.length === 2 && labels.at(-2) === 'co' ? 2 : 1;
  return { name: labels.slice(0, -tldLabels).join('.'), tld: labels.slice(-tldLabels).join('.') };
}
