import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  /** A run that records each group and answers each item doubled, after a tick. */
  const recording = (groups: number[][]) => async (items: number[]) => {
    groups.push(items);
    await new Promise((resolve) => setImmediate(resolve));
    return items.map((i) => i * 2);
  };

  it('starts a group at the first submit; what arrives while it runs shares the next one', async () => {
    const groups: number[][] = [];
    const commit = new GroupCommit({ maxInFlight: 1, maxItems: 10 }, recording(groups));
    const results = await Promise.all([1, 2, 3, 4].map((i) => commit.submit(i)));
    expect(results).toEqual([2, 4, 6, 8]);
    expect(groups).toEqual([[1], [2, 3, 4]]);
  });

  it('with gather, everything submitted in one turn of the loop shares one group, up to maxItems', async () => {
    const groups: number[][] = [];
    const commit = new GroupCommit({ maxInFlight: 1, maxItems: 3, gather: true }, recording(groups));
    const results = await Promise.all([1, 2, 3, 4].map((i) => commit.submit(i)));
    expect(results).toEqual([2, 4, 6, 8]);
    expect(groups).toEqual([[1, 2, 3], [4]]);
  });

  it('retries a failed group one item at a time, so only the bad item fails', async () => {
    const commit = new GroupCommit({ maxInFlight: 1, maxItems: 10, gather: true }, async (items: number[]) => {
      if (items.includes(3)) throw new Error('bad item');
      return items;
    });
    const settled = await Promise.allSettled([1, 2, 3].map((i) => commit.submit(i)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
  });
});
