import { DebouncedBatch } from './debounced-batch';

describe('DebouncedBatch', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes the items added within the delay together, once', async () => {
    const writes: number[][] = [];
    const batch = new DebouncedBatch<number>(100, async (items) => void writes.push(items));
    batch.add(1);
    batch.add(2);
    await jest.advanceTimersByTimeAsync(99);
    expect(writes).toEqual([]);
    batch.add(3);
    await jest.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([[1, 2, 3]]);
    batch.add(4);
    await jest.advanceTimersByTimeAsync(100);
    expect(writes).toEqual([[1, 2, 3], [4]]);
  });

  it('close() writes what is waiting at once, after a write in progress', async () => {
    const writes: number[][] = [];
    const batch = new DebouncedBatch<number>(100, async (items) => void writes.push(items));
    batch.add(1);
    await batch.close();
    expect(writes).toEqual([[1]]);
    await batch.close();
    expect(writes).toEqual([[1]]);
  });
});
