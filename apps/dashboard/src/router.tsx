import { Anchor, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { createRootRoute, createRoute, createRouter, Link, lazyRouteComponent, Outlet, useSearch } from '@tanstack/react-router';
import { ErrorAlert, Redirect } from './components/ui';
import { isSignedOut } from './lib/api-error';
import { homeTeam } from './lib/last-team';
import { useMe } from './lib/queries';

function NotFound() {
  return (
    <Center mih="60vh" p="md">
      <Stack align="center" gap="xs">
        <Title order={1} size="h3">
          Page not found
        </Title>
        <Text c="dimmed">There is no dashboard page at this address.</Text>
        <Anchor component={Link} to="/">
          Go to the dashboard
        </Anchor>
      </Stack>
    </Center>
  );
}

/**
 * `/dashboard/`: the domains of the team last worked in (else the first) when signed in, else sign-in. The emailed verification
 * link lands here as `?verified=1` (VERIFIED_CALLBACK), which the sign-in page turns into a notice.
 */
function Home() {
  const me = useMe();
  const search = useSearch({ strict: false }) as { verified?: unknown };
  if (me.isPending) return <Loader m="xl" aria-label="Loading" />;
  if (isSignedOut(me.error)) return <Redirect to="/sign-in" search={search.verified ? { verified: 1 } : {}} />;
  if (me.error) return <ErrorAlert error={me.error} title="The dashboard could not load" />;
  const team = homeTeam(me.data.teams);
  if (!team) return <ErrorAlert error={new Error('You are in no team yet. Ask a team owner for an invitation.')} title="No team" />;
  return <Redirect to={`/t/${team.id}/domains`} />;
}

const rootRoute = createRootRoute({ component: Outlet, notFoundComponent: NotFound });
const page = (path: string, load: () => Promise<Record<string, unknown>>, name: string, parent: typeof rootRoute | typeof teamRoute = rootRoute) =>
  createRoute({ getParentRoute: () => parent, path, component: lazyRouteComponent(load as never, name as never) });

const teamRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: 't/$teamId',
  component: lazyRouteComponent(() => import('./components/shell'), 'Shell'),
});

const routeTree = rootRoute.addChildren([
  createRoute({ getParentRoute: () => rootRoute, path: '/', component: Home }),
  page('sign-in', () => import('./pages/auth/sign-in'), 'SignInPage'),
  page('sign-up', () => import('./pages/auth/sign-up'), 'SignUpPage'),
  page('verify-email', () => import('./pages/auth/recovery'), 'VerifyEmailPage'),
  page('forgot-password', () => import('./pages/auth/recovery'), 'ForgotPasswordPage'),
  page('reset-password', () => import('./pages/auth/recovery'), 'ResetPasswordPage'),
  page('two-factor', () => import('./pages/auth/two-factor'), 'TwoFactorPage'),
  page('invitations/$token', () => import('./pages/auth/invitation'), 'InvitationPage'),
  teamRoute.addChildren([
    page('/', () => import('./pages/domains'), 'DomainsPage', teamRoute),
    page('domains', () => import('./pages/domains'), 'DomainsPage', teamRoute),
    page('domains/$domainId', () => import('./pages/domain-detail'), 'DomainDetailPage', teamRoute),
    page('emails', () => import('./pages/emails'), 'EmailsPage', teamRoute),
    page('emails/$emailId', () => import('./pages/email-detail'), 'EmailDetailPage', teamRoute),
    page('metrics', () => import('./pages/metrics'), 'MetricsPage', teamRoute),
    page('api-keys', () => import('./pages/api-keys'), 'ApiKeysPage', teamRoute),
    page('webhooks', () => import('./pages/webhooks'), 'WebhooksPage', teamRoute),
    page('webhooks/$webhookId', () => import('./pages/webhook-detail'), 'WebhookDetailPage', teamRoute),
    page('broadcasts', () => import('./pages/broadcasts'), 'BroadcastsPage', teamRoute),
    page('broadcasts/$broadcastId', () => import('./pages/broadcast-compose'), 'BroadcastComposePage', teamRoute),
    page('contacts', () => import('./pages/contacts'), 'ContactsPage', teamRoute),
    page('suppressions', () => import('./pages/suppressions'), 'SuppressionsPage', teamRoute),
    page('team', () => import('./pages/team'), 'TeamPage', teamRoute),
    page('account', () => import('./pages/account'), 'AccountPage', teamRoute),
    page('audit-log', () => import('./pages/audit-log'), 'AuditLogPage', teamRoute),
  ]),
]);

export const router = createRouter({ routeTree, basepath: '/dashboard', defaultPreload: 'intent', defaultNotFoundComponent: NotFound });
