import { Button, Group, Paper, Progress, Stack, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useTeamId, useTeamQuery } from '../lib/queries';
import type { ContactImportReport } from '../lib/types';
import { FINISHED } from './contact-import';
import { StatusBadge } from './ui';

type ImportSummary = Omit<ContactImportReport, 'rejected_rows'>;

const processed = ({ counts }: ImportSummary) => counts.created + counts.updated + counts.skipped + counts.failed;

/**
 * The team's imports going on (polled every second while there are some), each with its
 * progress, and else the latest one: an import goes on after its window is closed or the page
 * is left, and its report stays here.
 */
export function RecentImports({ onOpen }: { onOpen: (report: ContactImportReport) => void }) {
  const teamId = useTeamId();
  const client = useQueryClient();
  const imports = useTeamQuery<List<ImportSummary>>(
    '/contact-imports',
    { limit: 5 },
    { refetchInterval: (query) => (query.state.data?.data.some((i) => !FINISHED.has(i.status)) ? 1000 : false) },
  );
  const all = imports.data?.data ?? [];
  const running = all.filter((i) => !FINISHED.has(i.status));
  const wasRunning = useRef(0);
  useEffect(() => {
    // An import finished: the contacts it wrote show in the list.
    if (running.length < wasRunning.current)
      void client.invalidateQueries({ predicate: (q) => q.queryKey[0] === 'team' && q.queryKey[1] === teamId && q.queryKey[2] === '/contacts' });
    wasRunning.current = running.length;
  }, [running.length, client, teamId]);
  const shown = running.length ? running : all.slice(0, 1);
  if (!shown.length) return null;
  return (
    <Stack gap="xs" mb="sm" component="section" aria-label="Contact imports">
      {shown.map((i) => (
        <Paper key={i.id} withBorder p="sm" radius="md">
          <Group justify="space-between" gap="xs" wrap="wrap">
            <Group gap="xs" wrap="wrap">
              <StatusBadge status={i.status} />
              <Text size="sm">
                {FINISHED.has(i.status)
                  ? `Last import, ${formatDate(i.completed_at)}: ${i.counts.created} created, ${i.counts.updated} updated, ${i.counts.skipped + i.counts.failed} not imported`
                  : `Importing contacts: ${processed(i).toLocaleString('en')} of ${i.counts.total.toLocaleString('en')} rows`}
              </Text>
            </Group>
            <Button size="compact-sm" variant="default" onClick={() => onOpen({ ...i, rejected_rows: [] })}>
              {FINISHED.has(i.status) ? 'Report' : 'Progress'}
            </Button>
          </Group>
          {!FINISHED.has(i.status) && (
            <Progress
              mt="xs"
              value={i.counts.total ? Math.floor((processed(i) / i.counts.total) * 100) : 0}
              aria-label={`Rows imported: ${processed(i)} of ${i.counts.total}`}
            />
          )}
        </Paper>
      ))}
    </Stack>
  );
}
