import { Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue, useDisclosure } from '@mantine/hooks';
import { keepPreviousData } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { DataList } from '../components/data-list';
import { Pager, useKeysetPages } from '../components/pager';
import { Confirm, EmptyState, ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import type { List } from '../lib/api';
import { formatDate } from '../lib/format';
import { useCanWrite, useTeamMutation, useTeamQuery } from '../lib/queries';
import type { Suppression } from '../lib/types';

export function SuppressionsPage() {
  const canWrite = useCanWrite();
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 300);
  const pages = useKeysetPages();
  const list = useTeamQuery<List<Suppression>>('/suppressions', { q, limit: 50, after: pages.after }, { placeholderData: keepPreviousData });
  const [adding, { open, close }] = useDisclosure(false);
  const [removing, setRemoving] = useState<Suppression | null>(null);
  const remove = useTeamMutation((id: string) => ({ method: 'DELETE', path: `/suppressions/${id}` }), ['/suppressions']);
  const add = canWrite && <Button onClick={open}>Add address</Button>;
  const rows = list.data?.data ?? [];
  return (
    <>
      <PageHeader
        title="Suppressions"
        description="Herald sends nothing to these addresses: they bounced, complained, unsubscribed or were added by hand."
        actions={add}
      />
      <TextInput
        label="Search"
        description="Any part of an address, e.g. a name or @example.com"
        placeholder="Email address"
        value={search}
        onChange={(e) => {
          setSearch(e.currentTarget.value);
          pages.reset();
        }}
        mb="sm"
        maw={360}
      />
      <ErrorAlert error={list.error} title="The suppressions could not load" />
      {list.data && rows.length === 0 && (
        <EmptyState title={q ? 'No suppressed address matches' : 'No suppressed addresses'}>
          {q
            ? 'No address on the list contains these characters. Try fewer, or the domain alone.'
            : 'Addresses that hard-bounce or complain are added here automatically. You can also add one by hand.'}
        </EmptyState>
      )}
      {rows.length > 0 && (
        <DataList
          rows={rows}
          rowKey={(s) => s.id}
          minWidth={520}
          columns={[
            {
              header: 'Address',
              phone: 'title',
              cell: (s) => (
                <Text component="span" ff="monospace" size="xs">
                  {s.email}
                </Text>
              ),
            },
            { header: 'Origin', phone: 'badge', cell: (s) => <StatusBadge status={s.origin} /> },
            { header: 'Added', phone: 'line', nowrap: true, cell: (s) => formatDate(s.created_at) },
            ...(canWrite
              ? [
                  {
                    header: '',
                    phone: 'action' as const,
                    cell: (s: Suppression) => (
                      <Button size="xs" variant="subtle" color="red" onClick={() => setRemoving(s)} aria-label={`Remove ${s.email}`}>
                        Remove
                      </Button>
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
      <Pager pages={pages} hasMore={list.data?.has_more} lastId={rows[rows.length - 1]?.id} />
      <AddSuppression opened={adding} onClose={close} />
      <Confirm
        opened={removing !== null}
        onClose={() => setRemoving(null)}
        title="Remove this address?"
        confirmLabel="Remove"
        loading={remove.isPending}
        error={remove.error}
        onConfirm={() => removing && remove.mutate(removing.id, { onSuccess: () => setRemoving(null) })}
      >
        Herald will send to {removing?.email} again.
      </Confirm>
    </>
  );
}

function AddSuppression({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const [email, setEmail] = useState('');
  const add = useTeamMutation<Suppression, { email: string; reason: string }>(
    (body) => ({ method: 'POST', path: '/suppressions', body }),
    ['/suppressions'],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate(
      { email: email.trim(), reason: 'manual' },
      {
        onSuccess: () => {
          setEmail('');
          onClose();
        },
      },
    );
  };
  return (
    <Modal opened={opened} onClose={onClose} title="Suppress an address" centered>
      <form onSubmit={submit}>
        <Stack>
          <ErrorAlert error={add.error} title="The address was not added" />
          <TextInput label="Email address" type="email" required value={email} onChange={(e) => setEmail(e.currentTarget.value)} data-autofocus />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={add.isPending}>
              Suppress
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
