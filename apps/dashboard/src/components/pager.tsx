import { Button, Group } from '@mantine/core';
import { useCallback, useState } from 'react';

/**
 * Keyset pages, newest first: a stack of the `after` cursor of each page seen (the last id of the
 * page before it), so Newer goes back one page and a change of filter starts again at the first.
 */
export function useKeysetPages() {
  const [cursors, setCursors] = useState<string[]>([]);
  const reset = useCallback(() => setCursors([]), []);
  return {
    /** The `after` of the page shown; undefined on the first page. */
    after: cursors[cursors.length - 1],
    first: cursors.length === 0,
    older: (lastId: string) => setCursors((current) => [...current, lastId]),
    newer: () => setCursors((current) => current.slice(0, -1)),
    reset,
  };
}

/** Newer and Older under a list; nothing when the list fits on one page. */
export function Pager({
  pages,
  hasMore,
  lastId,
}: {
  pages: ReturnType<typeof useKeysetPages>;
  hasMore: boolean | undefined;
  lastId: string | undefined;
}) {
  if (pages.first && !hasMore) return null;
  return (
    <Group justify="flex-end" mt="sm">
      <Button variant="default" size="xs" disabled={pages.first} onClick={pages.newer}>
        Newer
      </Button>
      <Button variant="default" size="xs" disabled={!hasMore || !lastId} onClick={() => lastId && pages.older(lastId)}>
        Older
      </Button>
    </Group>
  );
}
