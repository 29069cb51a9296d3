import { Alert, Button, Group, Paper, PasswordInput, Stack, Text } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { AuditEntries } from '../components/audit-entries';
import { DataList } from '../components/data-list';
import { Pager, useKeysetPages } from '../components/pager';
import { EmptyState, ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import { api } from '../lib/api';
import { authClient, authErrorMessage } from '../lib/auth';
import { deviceName, formatDate } from '../lib/format';
import { useMe } from '../lib/queries';
import type { AuditPage } from '../lib/types';
import { Mfa, Passkeys } from './account-security';

/** better-auth's `{ data, error }` as a value or a thrown Error carrying its message, for react-query. */
export async function unwrap<T>(
  call: Promise<{ data: T | null; error: { message?: string; status?: number; statusText?: string } | null }>,
): Promise<T> {
  const { data, error } = await call;
  if (error) throw new Error(authErrorMessage(error) ?? 'The request failed.');
  return data as T;
}

export function Section({ title, description, children }: { title: string; description?: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md" mb="md" component="section" aria-label={title}>
      <Text fw={600}>{title}</Text>
      {description && (
        <Text size="sm" c="dimmed" mb="sm">
          {description}
        </Text>
      )}
      {children}
    </Paper>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useMutation({
    mutationFn: () => unwrap(authClient.changePassword({ currentPassword: current, newPassword: next, revokeOtherSessions: true })),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate(undefined, { onSuccess: () => (setCurrent(''), setNext('')) });
  };
  return (
    <Section title="Password" description="Changing it signs out your other sessions.">
      <form onSubmit={submit}>
        <Stack gap="xs" maw={360}>
          <ErrorAlert error={change.error} title="The password was not changed" />
          {change.isSuccess && (
            <Alert color="green" variant="light" role="status">
              Your password is changed.
            </Alert>
          )}
          <PasswordInput
            label="Current password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(e) => setCurrent(e.currentTarget.value)}
          />
          <PasswordInput label="New password" autoComplete="new-password" required value={next} onChange={(e) => setNext(e.currentTarget.value)} />
          <Group>
            <Button type="submit" loading={change.isPending}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

function LinkedAccounts() {
  const client = useQueryClient();
  const accounts = useQuery({ queryKey: ['auth', 'accounts'], queryFn: () => unwrap(authClient.listAccounts()) });
  const unlink = useMutation({
    mutationFn: (accountId: string) => unwrap(authClient.unlinkAccount({ accountId })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['auth', 'accounts'] }),
  });
  const link = useMutation({
    mutationFn: (provider: 'google' | 'github') => unwrap(authClient.linkSocial({ provider, callbackURL: window.location.href })),
  });
  // unlink-account takes the `id` of the list-accounts entry, not the provider's account id (CONTRACT.md, backend note 4).
  const linked = new Map((accounts.data ?? []).map((a) => [a.providerId, a.id]));
  return (
    <Section title="Sign-in methods" description="Link Google or GitHub to sign in with them; a provider's verified address links to this account.">
      <ErrorAlert error={accounts.error ?? unlink.error ?? link.error} />
      <Stack gap="xs">
        {(['credential', 'google', 'github'] as const).map((provider) => (
          <Group key={provider} justify="space-between">
            <Group gap="xs">
              <Text size="sm">{provider === 'credential' ? 'Email and password' : provider === 'google' ? 'Google' : 'GitHub'}</Text>
              <StatusBadge status={linked.has(provider) ? 'linked' : 'not_linked'} />
            </Group>
            {provider !== 'credential' &&
              (linked.has(provider) ? (
                <Button size="xs" variant="subtle" color="red" disabled={linked.size < 2} onClick={() => unlink.mutate(linked.get(provider) ?? '')}>
                  Unlink
                </Button>
              ) : (
                <Button size="xs" variant="default" onClick={() => link.mutate(provider)}>
                  Link
                </Button>
              ))}
          </Group>
        ))}
      </Stack>
    </Section>
  );
}

function Sessions() {
  const client = useQueryClient();
  const current = authClient.useSession();
  const sessions = useQuery({ queryKey: ['auth', 'sessions'], queryFn: () => unwrap(authClient.listSessions()) });
  const revoke = useMutation({
    mutationFn: (token: string) => unwrap(authClient.revokeSession({ token })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['auth', 'sessions'] }),
  });
  const rows = sessions.data ?? [];
  const action = (s: (typeof rows)[number]) =>
    current.data?.session.id === s.id ? (
      <Text size="xs" c="dimmed">
        This session
      </Text>
    ) : (
      <Button
        size="xs"
        variant="subtle"
        color="red"
        onClick={() => revoke.mutate(s.token)}
        aria-label={`Revoke the session of ${deviceName(s.userAgent)}`}
      >
        Revoke
      </Button>
    );
  return (
    <Section title="Sessions" description="Where you are signed in. Revoke a session you do not recognise.">
      <ErrorAlert error={sessions.error ?? revoke.error} />
      <DataList
        rows={rows}
        rowKey={(s) => s.id}
        minWidth={520}
        columns={[
          {
            header: 'Device',
            phone: 'title',
            maw: 260,
            cell: (s) => (
              <Text size="xs" title={s.userAgent ?? undefined}>
                {deviceName(s.userAgent)}
              </Text>
            ),
          },
          {
            header: 'Address',
            phone: 'line',
            cell: (s) => (
              <Text size="xs" ff="monospace">
                {s.ipAddress || '—'}
              </Text>
            ),
          },
          { header: 'Signed in', phone: 'line', nowrap: true, cell: (s) => <Text size="xs">{formatDate(String(s.createdAt))}</Text> },
          { header: '', phone: 'badge', cell: action },
        ]}
      />
    </Section>
  );
}

/** The person's own audit log: sign-ins, MFA, password, linked accounts and sessions. */
function Activity() {
  const pages = useKeysetPages();
  const log = useQuery({
    queryKey: ['me', 'audit-log', pages.after ?? ''],
    queryFn: () => api<AuditPage>('/me/audit-log', { query: { limit: 20, after: pages.after } }),
    placeholderData: keepPreviousData,
  });
  const entries = log.data?.data ?? [];
  return (
    <Section title="Recent activity" description="Sign-ins and security changes of your account, newest first, with the address they came from.">
      <ErrorAlert error={log.error} title="The activity could not load" />
      {log.data && entries.length === 0 && <EmptyState title="Nothing recorded yet">Your sign-ins and security changes appear here.</EmptyState>}
      {entries.length > 0 && <AuditEntries entries={entries} showActor={false} />}
      <Pager pages={pages} hasMore={log.data?.has_more} lastId={entries[entries.length - 1]?.id} />
    </Section>
  );
}

export function AccountPage() {
  const me = useMe();
  return (
    <>
      <PageHeader title="Account" description={me.data ? `${me.data.user.name} · ${me.data.user.email}` : undefined} />
      <ChangePassword />
      <Mfa enabled={Boolean(me.data?.user.two_factor_enabled)} />
      <Passkeys />
      <LinkedAccounts />
      <Sessions />
      <Activity />
    </>
  );
}
