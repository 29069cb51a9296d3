import { Alert, Button, Group, Paper, PasswordInput, Stack, Text } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearch } from '@tanstack/react-router';
import { useState, type FormEvent, type ReactNode } from 'react';
import { AuditEntries } from '../components/audit-entries';
import { DataList } from '../components/data-list';
import { Pager, useKeysetPages } from '../components/pager';
import { EmptyState, ErrorAlert, PageHeader, StatusBadge } from '../components/ui';
import { api } from '../lib/api';
import { authClient, authErrorMessage } from '../lib/auth';
import { deviceName, formatDate } from '../lib/format';
import { isProvider, linkErrorMessage, PROVIDERS, type Provider } from '../lib/provider-errors';
import { useMe, useSignInProviders } from '../lib/queries';
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

/** better-auth's list of the person's sign-in methods (`credential` is the password), shared by the sections that depend on it. */
function useSignInMethods() {
  return useQuery({ queryKey: ['auth', 'accounts'], queryFn: () => unwrap(authClient.listAccounts()) });
}

/**
 * Someone who signed up with Google or GitHub has no password. Herald emails them a link to set
 * one (better-auth's reset link makes the password when there was none), which also opens
 * two-factor codes to them.
 */
function SetPassword({ email }: { email: string }) {
  const send = useMutation({
    mutationFn: () => unwrap(authClient.requestPasswordReset({ email, redirectTo: '/dashboard/reset-password' })),
  });
  return (
    <Section title="Password" description="You have no password: you sign in with Google or GitHub (or a passkey).">
      <ErrorAlert error={send.error} title="The link was not sent" />
      {send.isSuccess ? (
        <Alert color="green" variant="light" role="status">
          We sent a link to {email}. Open it to choose a password.
        </Alert>
      ) : (
        <Stack gap="xs" align="flex-start">
          <Text size="sm">To sign in with a password too, Herald emails you a link to choose one.</Text>
          <Button variant="default" loading={send.isPending} onClick={() => send.mutate()}>
            Email me a link to set a password
          </Button>
        </Stack>
      )}
    </Section>
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

/**
 * How the person signs in: their password and each provider, linked or not. Link goes to the
 * provider and back here (`?linked=<id>`, or `?error=<code>&provider=<id>` when it failed);
 * the last sign-in method cannot be unlinked.
 */
function LinkedAccounts() {
  const client = useQueryClient();
  const search = useSearch({ strict: false }) as { linked?: unknown; error?: unknown; provider?: unknown };
  const returned = typeof search.error === 'string' ? linkErrorMessage(search.error, search.provider) : null;
  const accounts = useSignInMethods();
  const unlink = useMutation({
    mutationFn: (accountId: string) => unwrap(authClient.unlinkAccount({ accountId })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['auth', 'accounts'] }),
  });
  const link = useMutation({
    mutationFn: (provider: Provider) =>
      unwrap(
        authClient.linkSocial({
          provider,
          callbackURL: `${window.location.pathname}?linked=${provider}`,
          errorCallbackURL: `${window.location.pathname}?provider=${provider}`,
        }),
      ),
  });
  // unlink-account takes the `id` of the list-accounts entry, not the provider's account id (CONTRACT.md, backend note 4).
  const linked = new Map((accounts.data ?? []).map((a) => [a.providerId, a.id]));
  // The password, then each provider this Herald offers or the person has linked (one no longer offered can still be unlinked).
  const offered = useSignInProviders();
  const methods: ('credential' | Provider)[] = [
    'credential',
    ...(Object.keys(PROVIDERS) as Provider[]).filter((p) => offered.data?.includes(p) || linked.has(p)),
  ];
  const justLinked = isProvider(search.linked) && linked.has(search.linked) && !unlink.isSuccess ? PROVIDERS[search.linked] : null;
  const only = linked.size < 2;
  return (
    <Section
      title="Sign-in methods"
      description={
        offered.data?.length
          ? `Link ${offered.data.map((p) => PROVIDERS[p]).join(' or ')} to sign in with it. A provider links only with the same verified address as this account.`
          : offered.isSuccess
            ? 'How you sign in. This Herald offers no sign-in with Google or GitHub.'
            : 'How you sign in.'
      }
    >
      {returned && !link.isPending && (
        <Alert color="red" variant="light" title="Not linked" role="alert" mb="sm">
          {returned}
        </Alert>
      )}
      {justLinked && (
        <Alert color="green" variant="light" role="status" mb="sm">
          {justLinked} is linked: you can sign in with it.
        </Alert>
      )}
      <ErrorAlert error={accounts.error ?? unlink.error ?? link.error} />
      <Stack gap="xs" component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
        {methods.map((method) => {
          const label = method === 'credential' ? 'Email and password' : PROVIDERS[method];
          return (
            <Group key={method} component="li" justify="space-between" wrap="nowrap">
              <Group gap="xs">
                <Text size="sm">{label}</Text>
                <StatusBadge status={linked.has(method) ? 'linked' : 'not_linked'} />
              </Group>
              {method === 'credential' ? null : linked.has(method) ? (
                <Button
                  size="xs"
                  variant="subtle"
                  color="red"
                  aria-label={`Unlink ${label}`}
                  style={{ flexShrink: 0 }}
                  disabled={only}
                  title={only ? 'Your only way to sign in cannot be unlinked.' : undefined}
                  loading={unlink.isPending && unlink.variables === linked.get(method)}
                  onClick={() => unlink.mutate(linked.get(method) ?? '')}
                >
                  Unlink
                </Button>
              ) : (
                <Button
                  size="xs"
                  variant="default"
                  aria-label={`Link ${label}`}
                  style={{ flexShrink: 0 }}
                  loading={link.isPending && link.variables === method}
                  onClick={() => link.mutate(method)}
                >
                  Link
                </Button>
              )}
            </Group>
          );
        })}
      </Stack>
      {accounts.isSuccess && only && (
        <Text size="xs" c="dimmed" mt="xs">
          This is your only way to sign in, so it cannot be unlinked. Link another first.
        </Text>
      )}
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
  const methods = useSignInMethods();
  // Until the methods are known, the page assumes a password (most people have one).
  const hasPassword = !methods.data || methods.data.some((m) => m.providerId === 'credential');
  return (
    <>
      <PageHeader title="Account" description={me.data ? `${me.data.user.name} · ${me.data.user.email}` : undefined} />
      {hasPassword || !me.data ? <ChangePassword /> : <SetPassword email={me.data.user.email} />}
      <Mfa enabled={Boolean(me.data?.user.two_factor_enabled)} hasPassword={hasPassword} />
      <Passkeys />
      <LinkedAccounts />
      <Sessions />
      <Activity />
    </>
  );
}
