import { parseFlags, requireFlag, UsageError } from './args';

describe('parseFlags', () => {
  it('reads positional words and flags in both forms', () => {
    expect(parseFlags(['team', 'create', '--name', 'Acme Inc', '--region=eu-west-1', '--dry-run'])).toEqual({
      positional: ['team', 'create'],
      flags: { name: 'Acme Inc', region: 'eu-west-1', 'dry-run': 'true' },
    });
  });

  it('names a missing required flag', () => {
    expect(() => requireFlag({}, 'team')).toThrow(new UsageError('--team is required'));
  });
});
