import { homeTeam, rememberTeam } from './last-team';

class MemoryStorage {
  private readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

describe('the team the dashboard opens on', () => {
  const teams = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];

  it('is the first team when none was remembered', () => {
    expect(homeTeam(teams, new MemoryStorage())).toEqual({ id: 'a' });
  });

  it('is the team last worked in', () => {
    const storage = new MemoryStorage();
    rememberTeam('b', storage);
    expect(homeTeam(teams, storage)).toEqual({ id: 'b' });
  });

  it('falls back to the first team when the remembered one is no longer theirs', () => {
    const storage = new MemoryStorage();
    rememberTeam('gone', storage);
    expect(homeTeam(teams, storage)).toEqual({ id: 'a' });
  });

  it('is none for a person in no team', () => {
    expect(homeTeam([], new MemoryStorage())).toBeUndefined();
  });

  it('survives a storage that throws', () => {
    const refusing = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
    };
    expect(() => rememberTeam('b', refusing)).not.toThrow();
    expect(homeTeam(teams, refusing)).toEqual({ id: 'a' });
  });
});
