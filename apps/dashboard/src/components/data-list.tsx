import { Box, Group, Stack, Table, Text } from '@mantine/core';
import { Fragment, type ReactNode } from 'react';

export interface Column<T> {
  /** The column's heading; an empty one is the actions column (labelled "Actions" for screen readers). */
  header: string;
  cell: (row: T) => ReactNode;
  /**
   * Where the cell goes in a row's card at phone width: `title` (first line), `badge` (first
   * line, at the right), `line` (a line of its own, after its heading), `action` (the card's
   * buttons), `hidden` (not at phone width).
   */
  phone: 'title' | 'badge' | 'line' | 'action' | 'hidden';
  /** Keeps the cell on one line in the table (dates). */
  nowrap?: boolean;
  maw?: number;
}

/**
 * A list of rows: a table from the `sm` width up, and below it one card per row, so that nothing
 * scrolls sideways or is cut off at 390 px. `expanded` is shown under a row (both widths).
 */
export function DataList<T>({
  rows,
  rowKey,
  columns,
  minWidth = 560,
  expanded,
}: {
  rows: T[];
  rowKey: (row: T) => string;
  columns: Column<T>[];
  minWidth?: number;
  expanded?: (row: T) => ReactNode;
}) {
  const where = (kind: Column<T>['phone']) => columns.filter((c) => c.phone === kind);
  return (
    <>
      <Stack hiddenFrom="sm" gap={0}>
        {rows.map((row) => {
          const actions = where('action');
          return (
            <Stack key={rowKey(row)} gap={4} py="xs" style={{ borderBottom: '1px solid var(--mantine-color-gray-3)' }}>
              <Group justify="space-between" wrap="nowrap" align="flex-start" gap="xs">
                <Box style={{ minWidth: 0, overflowWrap: 'anywhere' }}>
                  {where('title').map((c) => (
                    <Fragment key={c.header}>{c.cell(row)}</Fragment>
                  ))}
                </Box>
                {where('badge').map((c) => (
                  <Fragment key={c.header}>{c.cell(row)}</Fragment>
                ))}
              </Group>
              {where('line').map((c) => (
                <Group key={c.header} gap={6} wrap="nowrap" align="baseline">
                  <Text size="xs" c="dimmed" style={{ flexShrink: 0 }}>
                    {c.header}
                  </Text>
                  <Box fz="xs" style={{ minWidth: 0, overflowWrap: 'anywhere' }}>
                    {c.cell(row)}
                  </Box>
                </Group>
              ))}
              {actions.length > 0 && (
                <Group gap={4} justify="flex-end">
                  {actions.map((c) => (
                    <Fragment key={c.header}>{c.cell(row)}</Fragment>
                  ))}
                </Group>
              )}
              {expanded?.(row)}
            </Stack>
          );
        })}
      </Stack>
      <Table.ScrollContainer minWidth={minWidth} visibleFrom="sm">
        <Table verticalSpacing="xs" highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              {columns.map((c) => (c.header ? <Table.Th key={c.header}>{c.header}</Table.Th> : <Table.Th key="actions" aria-label="Actions" />))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => {
              const more = expanded?.(row);
              return (
                <Fragment key={rowKey(row)}>
                  <Table.Tr>
                    {columns.map((c) => (
                      <Table.Td key={c.header || 'actions'} maw={c.maw} style={c.nowrap ? { whiteSpace: 'nowrap' } : undefined}>
                        {c.cell(row)}
                      </Table.Td>
                    ))}
                  </Table.Tr>
                  {more && (
                    <Table.Tr>
                      <Table.Td colSpan={columns.length}>{more}</Table.Td>
                    </Table.Tr>
                  )}
                </Fragment>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </>
  );
}
