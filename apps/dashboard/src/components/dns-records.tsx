import { Box, Group, Paper, Stack, Table, Text } from '@mantine/core';
import { observedText } from '../lib/format';
import type { DnsRecord } from '../lib/types';
import { Copy, Mono, StatusBadge } from './ui';

function Answered({ record }: { record: DnsRecord }) {
  return (
    <Stack gap={2}>
      <Mono size="xs">{record.status === 'not_started' ? 'not checked yet' : observedText(record.observed)}</Mono>
      {record.reason && (
        <Text size="xs" c="dimmed">
          {record.reason}
        </Text>
      )}
    </Stack>
  );
}

function Copyable({ value, label, size = 'sm' }: { value: string; label: string; size?: string }) {
  return (
    <Group gap={4} wrap="nowrap" align="flex-start">
      <Mono size={size}>{value}</Mono>
      <Copy value={value} label={label} />
    </Group>
  );
}

/** A domain's DNS records: a table from 768 px up, one card per record below (phones). */
export function DnsRecords({ records }: { records: DnsRecord[] }) {
  return (
    <>
      <Box visibleFrom="sm">
        <Table.ScrollContainer minWidth={760}>
          <Table verticalSpacing="xs" withTableBorder>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Record</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Name</Table.Th>
                <Table.Th>Value</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>DNS answered</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {records.map((record, index) => (
                <Table.Tr key={`${record.record}-${record.type}-${index}`}>
                  <Table.Td>{record.record}</Table.Td>
                  <Table.Td>
                    <Mono>{record.type}</Mono>
                    {record.priority !== undefined && <Text size="xs">priority {record.priority}</Text>}
                  </Table.Td>
                  <Table.Td>
                    <Copyable value={record.name} label={`${record.record} ${record.type} name`} />
                  </Table.Td>
                  <Table.Td maw={320}>
                    <Copyable value={record.value} label={`${record.record} ${record.type} value`} size="xs" />
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={record.status} />
                  </Table.Td>
                  <Table.Td maw={240}>
                    <Answered record={record} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Box>
      <Stack hiddenFrom="sm" gap="sm">
        {records.map((record, index) => (
          <Paper key={`${record.record}-${record.type}-${index}`} withBorder p="sm">
            <Group justify="space-between" mb="xs">
              <Text fw={600} size="sm">
                {record.record} · <Mono>{record.type}</Mono>
                {record.priority !== undefined && ` · priority ${record.priority}`}
              </Text>
              <StatusBadge status={record.status} />
            </Group>
            <Text size="xs" c="dimmed">
              Name
            </Text>
            <Copyable value={record.name} label={`${record.record} ${record.type} name`} />
            <Text size="xs" c="dimmed" mt={6}>
              Value
            </Text>
            <Copyable value={record.value} label={`${record.record} ${record.type} value`} size="xs" />
            <Text size="xs" c="dimmed" mt={6}>
              DNS answered
            </Text>
            <Answered record={record} />
          </Paper>
        ))}
      </Stack>
    </>
  );
}
