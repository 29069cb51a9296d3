import { MAX_DOMAIN_HINTS } from '@herald/bus';
import { domainsOf } from './dispatch.repository';

describe('domainsOf (the recipient domains a send command names)', () => {
  it('names each domain once, lowercased and in its ASCII form, in order of appearance', () => {
    expect(domainsOf(['a@Example.TEST', 'b@example.test', 'c@other.test', 'd@bücher.test'])).toEqual([
      'example.test',
      'other.test',
      'xn--bcher-kva.test',
    ]);
  });

  it(`names none for an email to more than ${MAX_DOMAIN_HINTS} domains: its command is claimed as it comes`, () => {
    const addresses = (n: number) => Array.from({ length: n }, (_, i) => `r@d${i}.test`);
    expect(domainsOf(addresses(MAX_DOMAIN_HINTS))).toHaveLength(MAX_DOMAIN_HINTS);
    expect(domainsOf(addresses(MAX_DOMAIN_HINTS + 1))).toBeUndefined();
  });
});
