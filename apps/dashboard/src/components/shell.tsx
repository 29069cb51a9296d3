import { AppShell, Burger, Button, Center, Group, Loader, NavLink, ScrollArea, Select, Stack, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useLocation, useNavigate } from '@tanstack/react-router';
import { useEffect } from 'react';
import { authClient } from '../lib/auth';
import { isSignedOut } from '../lib/api-error';
import { useMe, useTeamId } from '../lib/queries';
import { ErrorAlert, Redirect } from './ui';

const NAV = [
  { to: 'domains', label: 'Domains' },
  { to: 'emails', label: 'Emails' },
  { to: 'metrics', label: 'Metrics' },
  { to: 'api-keys', label: 'API keys' },
  { to: 'webhooks', label: 'Webhooks' },
  { to: 'suppressions', label: 'Suppressions' },
  { to: 'team', label: 'Team' },
  { to: 'account', label: 'Account' },
];

/** The signed-in frame: header with the team switcher, the navigation (a burger menu at phone width), the page. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure(false);
  const me = useMe();
  const teamId = useTeamId();
  const location = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  // The router's pathname has no basepath: /t/:teamId/<section>/…
  const parts = location.pathname.split('/').filter(Boolean);
  const section = parts[2] ?? 'domains';
  useEffect(close, [location.pathname, close]);

  if (me.isPending) {
    return (
      <Center mih="100vh">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (isSignedOut(me.error)) return <Redirect to="/sign-in" />;
  if (me.error) {
    return (
      <Stack p="lg" maw={640} mx="auto">
        <ErrorAlert error={me.error} title="The dashboard could not load" />
      </Stack>
    );
  }
  const team = me.data.teams.find((t) => t.id === teamId);
  const signOut = async () => {
    await authClient.signOut();
    queryClient.clear();
    await navigate({ to: '/sign-in' });
  };

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={opened ? 'Close navigation' : 'Open navigation'} />
            <Text fw={700} size="lg" component={Link} to="/" c="inherit" td="none">
              Herald
            </Text>
          </Group>
          <Select
            aria-label="Team"
            size="xs"
            w={{ base: 160, sm: 220 }}
            allowDeselect={false}
            value={teamId}
            data={me.data.teams.map((t) => ({ value: t.id, label: `${t.name} · ${t.region}` }))}
            onChange={(value) => value && void navigate({ to: `/t/${value}/${section}` })}
          />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        <AppShell.Section grow component={ScrollArea}>
          {NAV.map((item) => (
            <NavLink key={item.to} component={Link} to={`/t/${teamId}/${item.to}`} label={item.label} active={section === item.to} variant="light" />
          ))}
        </AppShell.Section>
        <AppShell.Section>
          <Text size="xs" c="dimmed" px="sm" truncate>
            {me.data.user.email}
          </Text>
          <Button variant="subtle" color="gray" fullWidth justify="flex-start" onClick={() => void signOut()}>
            Sign out
          </Button>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        {team ? (
          <Outlet />
        ) : (
          <ErrorAlert error={new Error('This team does not exist or you are not a member of it. Pick a team above.')} title="Not found" />
        )}
      </AppShell.Main>
    </AppShell>
  );
}
