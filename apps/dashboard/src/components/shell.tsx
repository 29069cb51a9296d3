import {
  AppShell,
  Burger,
  Button,
  Center,
  Group,
  Loader,
  NavLink,
  Popover,
  ScrollArea,
  Stack,
  Text,
  UnstyledButton,
  VisuallyHidden,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useLocation, useNavigate } from '@tanstack/react-router';
import { useEffect } from 'react';
import { authClient } from '../lib/auth';
import { isSignedOut } from '../lib/api-error';
import { rememberTeam } from '../lib/last-team';
import { useMe, useTeamId } from '../lib/queries';
import type { Team } from '../lib/types';
import { ErrorAlert, Redirect } from './ui';

const NAV = [
  { to: 'domains', label: 'Domains' },
  { to: 'emails', label: 'Emails' },
  { to: 'metrics', label: 'Metrics' },
  { to: 'broadcasts', label: 'Broadcasts' },
  { to: 'api-keys', label: 'API keys' },
  { to: 'webhooks', label: 'Webhooks' },
  { to: 'contacts', label: 'Contacts' },
  { to: 'suppressions', label: 'Suppressions' },
  { to: 'team', label: 'Team' },
  { to: 'audit-log', label: 'Audit log', managers: true },
  { to: 'account', label: 'Account' },
];

function Chevron() {
  return (
    <svg width={14} height={14} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={2} aria-hidden>
      <path d="m6 9 6 6 6-6" />
    </svg>
  );
}

/**
 * The team switcher: the team's name with its region beneath (so neither is cut at phone width),
 * and a menu of the person's teams, each with its region and their role.
 */
function TeamSwitcher({ teams, current, onPick }: { teams: Team[]; current: Team | undefined; onPick: (teamId: string) => void }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  // A popover of buttons rather than an ARIA menu: Mantine's menu markup failed axe's
  // required-children rule, and a list of teams to move to is navigation, not commands.
  return (
    <Popover opened={opened} onChange={(open) => !open && close()} position="bottom-end" width={280} shadow="md" trapFocus returnFocus>
      <Popover.Target>
        <UnstyledButton
          data-team-switcher
          aria-expanded={opened}
          onClick={toggle}
          maw={{ base: 190, sm: 300 }}
          px="xs"
          py={4}
          style={{ borderRadius: 6, border: '1px solid var(--mantine-color-gray-3)' }}
        >
          <Group gap={6} wrap="nowrap">
            <Stack gap={0} style={{ minWidth: 0 }}>
              {/* The name comes from the visible text (what a voice-control user reads), after this prefix. */}
              <VisuallyHidden>Team:</VisuallyHidden>
              <Text size="sm" fw={600} truncate>
                {current?.name ?? 'Pick a team'}
              </Text>
              {current && (
                <Text size="xs" c="dimmed" truncate>
                  {current.region} · {current.role}
                </Text>
              )}
            </Stack>
            <Chevron />
          </Group>
        </UnstyledButton>
      </Popover.Target>
      <Popover.Dropdown p={4}>
        <Text id="your-teams" size="xs" c="dimmed" fw={500} px="sm" py={6}>
          Your teams
        </Text>
        <Stack component="ul" aria-labelledby="your-teams" gap={0} m={0} p={0} style={{ listStyle: 'none' }}>
          {teams.map((t) => (
            <li key={t.id}>
              <NavLink
                component="button"
                label={t.name}
                description={`${t.region} · ${t.role}`}
                active={t.id === current?.id}
                aria-current={t.id === current?.id ? 'true' : undefined}
                // Full opacity and gray 8: the active row's description sits on the light primary background,
                // and on its darker hover shade while the pointer rests there (gray 7 at Mantine's 0.9 failed axe).
                styles={{ label: { overflowWrap: 'anywhere' }, description: { color: 'var(--mantine-color-gray-8)', opacity: 1 } }}
                onClick={() => {
                  close();
                  onPick(t.id);
                }}
              />
            </li>
          ))}
        </Stack>
      </Popover.Dropdown>
    </Popover>
  );
}

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
  const isMember = me.data?.teams.some((t) => t.id === teamId) ?? false;
  useEffect(() => {
    if (isMember) rememberTeam(teamId);
  }, [isMember, teamId]);

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
          <TeamSwitcher teams={me.data.teams} current={team} onPick={(id) => void navigate({ to: `/t/${id}/${section}` })} />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        <AppShell.Section grow component={ScrollArea}>
          {NAV.filter((item) => !item.managers || team?.role === 'owner' || team?.role === 'admin').map((item) => (
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
