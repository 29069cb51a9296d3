import { Text } from '@mantine/core';
import { auditAction, auditDetail, deviceName, formatDate } from '../lib/format';
import type { AuditEntry } from '../lib/types';
import { DataList, type Column } from './data-list';

/** Audit entries, newest first: who did what, when, from which address and device. */
export function AuditEntries({ entries, showActor = true }: { entries: AuditEntry[]; showActor?: boolean }) {
  const columns: Column<AuditEntry>[] = [
    {
      header: 'What',
      phone: 'title',
      cell: (e) => (
        <>
          <Text size="sm">{auditAction(e.action)}</Text>
          {auditDetail(e.detail) && (
            <Text size="xs" c="dimmed">
              {auditDetail(e.detail)}
            </Text>
          )}
        </>
      ),
    },
    { header: 'When', phone: 'line', nowrap: true, cell: (e) => <Text size="xs">{formatDate(e.created_at)}</Text> },
    {
      header: 'Who',
      phone: showActor ? 'line' : 'hidden',
      cell: (e) => (
        <Text component="span" ff="monospace" size="xs">
          {e.actor_email || '—'}
        </Text>
      ),
    },
    {
      header: 'From',
      phone: 'line',
      cell: (e) => (
        <Text size="xs" title={e.user_agent ?? undefined}>
          <Text span ff="monospace" size="xs">
            {e.ip || 'unknown address'}
          </Text>{' '}
          · {deviceName(e.user_agent)}
        </Text>
      ),
    },
  ];
  return <DataList rows={entries} rowKey={(e) => e.id} minWidth={720} columns={showActor ? columns : columns.filter((c) => c.header !== 'Who')} />;
}
