import { Anchor, Badge, Button, Code, Group, Paper, SimpleGrid, Stack, Table, Tabs, Text, Timeline } from '@mantine/core';
import { Link, useParams } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { InsightsPanel } from '../components/insights-panel';
import { EmptyState, ErrorAlert, Mono, PageHeader, StatusBadge } from '../components/ui';
import { API_BASE } from '../lib/api';
import { formatDate } from '../lib/format';
import { hasRemoteContent, previewDocument } from '../lib/preview';
import { useTeamId, useTeamQuery } from '../lib/queries';
import type { EmailDetail } from '../lib/types';

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div" style={{ wordBreak: 'break-word' }}>
        {children}
      </Text>
    </div>
  );
}

interface Engagement {
  link?: string;
  ipAddress?: string;
  userAgent?: string;
}

const MACHINE_REASONS: Record<string, string> = {
  user_agent: 'a bot or scanner user agent',
  apple_privacy: 'Apple Mail Privacy Protection',
  link_scanner: 'a link scanner, seconds after delivery',
};

/** An open or a click: the link, who fetched it, and a "machine" badge when it was not a person. */
function EngagementDetail({ data }: { data: unknown }) {
  const d = (data ?? {}) as { open?: Engagement; click?: Engagement; tracking?: { machine?: boolean; reason?: string | null; unique?: boolean } };
  const hit = d.click ?? d.open;
  if (!hit) return null;
  return (
    <Stack gap={2} mt={4}>
      {d.click?.link && (
        <Text size="xs" style={{ wordBreak: 'break-all' }}>
          {d.click.link}
        </Text>
      )}
      <Text size="xs" c="dimmed" style={{ wordBreak: 'break-word' }}>
        {[hit.userAgent || 'No user agent', hit.ipAddress].filter(Boolean).join(' · ')}
      </Text>
      {(d.tracking?.machine || d.tracking?.unique) && (
        <Group gap={4}>
          {d.tracking?.machine && (
            <Badge size="xs" variant="outline" color="gray" title={`Flagged: ${MACHINE_REASONS[d.tracking.reason ?? ''] ?? 'a machine'}`}>
              Machine{d.tracking.reason ? `: ${MACHINE_REASONS[d.tracking.reason] ?? d.tracking.reason}` : ''}
            </Badge>
          )}
          {d.tracking?.unique && (
            <Badge size="xs" variant="outline" color="gray">
              First
            </Badge>
          )}
        </Group>
      )}
    </Stack>
  );
}

function Preview({ html }: { html: string }) {
  const [allowRemote, setAllowRemote] = useState(false);
  const srcDoc = useMemo(() => previewDocument(html, allowRemote), [html, allowRemote]);
  const remote = hasRemoteContent(html);
  return (
    <Stack gap="xs">
      {remote && !allowRemote && (
        <Group justify="space-between" p="xs" bg="yellow.0" style={{ borderRadius: 4 }}>
          <Text size="sm">Remote images and styles are blocked: loading them tells the sender the email was opened.</Text>
          <Button size="xs" variant="default" onClick={() => setAllowRemote(true)}>
            Load remote content
          </Button>
        </Group>
      )}
      <iframe
        title="HTML preview of the email"
        sandbox=""
        srcDoc={srcDoc}
        style={{ width: '100%', height: 560, border: '1px solid var(--mantine-color-gray-3)', borderRadius: 4, background: 'white' }}
      />
    </Stack>
  );
}

export function EmailDetailPage() {
  const teamId = useTeamId();
  const { emailId } = useParams({ strict: false }) as { emailId: string };
  const email = useTeamQuery<EmailDetail>(`/emails/${emailId}`, undefined, { refetchInterval: 5000 });
  if (email.error) return <ErrorAlert error={email.error} title="The email could not load" />;
  if (!email.data) return null;
  const e = email.data;
  const events = [...e.events].sort((a, b) => a.created_at.localeCompare(b.created_at));
  return (
    <>
      <Anchor component={Link} to={`/t/${teamId}/emails`} size="sm">
        ← Emails
      </Anchor>
      <PageHeader
        title={e.subject || '(no subject)'}
        description={<StatusBadge status={e.last_event} />}
        actions={
          <Button component="a" variant="default" href={`${API_BASE}/teams/${teamId}/emails/${e.id}/raw`} download>
            Download raw MIME
          </Button>
        }
      />
      <Paper withBorder p="md" mb="md">
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="sm">
          <Field label="ID">
            <Mono>{e.id}</Mono>
          </Field>
          <Field label="From">
            <Mono>{e.from}</Mono>
          </Field>
          <Field label="To">{e.to.join(', ')}</Field>
          {e.cc?.length ? <Field label="Cc">{e.cc.join(', ')}</Field> : null}
          {e.reply_to?.length ? <Field label="Reply-To">{e.reply_to.join(', ')}</Field> : null}
          <Field label="Created">{formatDate(e.created_at)}</Field>
        </SimpleGrid>
      </Paper>
      <InsightsPanel emailId={e.id} />
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md" mb="md">
        <Paper withBorder p="md">
          <Text fw={600} mb="xs">
            Recipients
          </Text>
          {/* One recipient a block (address and status, then the last SMTP reply): it reads at any width. */}
          <Stack gap="xs">
            {e.recipients.map((r) => (
              <div key={r.email}>
                <Group justify="space-between" wrap="nowrap" gap="xs" align="flex-start">
                  <Mono size="xs">{r.email}</Mono>
                  <StatusBadge status={r.status} />
                </Group>
                {r.detail && (
                  <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
                    {r.detail}
                  </Text>
                )}
              </div>
            ))}
          </Stack>
        </Paper>
        <Paper withBorder p="md">
          <Text fw={600} mb="xs">
            Events
          </Text>
          {events.length === 0 ? (
            <Text size="sm" c="dimmed">
              No events yet; they appear as the email is sent.
            </Text>
          ) : (
            <Timeline bulletSize={12} lineWidth={2} active={events.length - 1}>
              {events.map((event) => (
                <Timeline.Item key={event.id} title={<StatusBadge status={event.type.replace(/^email\./, '')} />}>
                  <Text size="xs" c="dimmed">
                    {formatDate(event.created_at)}
                    {event.recipient ? ` · ${event.recipient}` : ''}
                  </Text>
                  {(event.type === 'email.opened' || event.type === 'email.clicked') && <EngagementDetail data={event.data} />}
                </Timeline.Item>
              ))}
            </Timeline>
          )}
        </Paper>
      </SimpleGrid>
      <Tabs defaultValue={e.html ? 'html' : 'text'} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="html">HTML</Tabs.Tab>
          <Tabs.Tab value="text">Text</Tabs.Tab>
          <Tabs.Tab value="headers">Headers</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="html" pt="sm">
          {e.html ? <Preview html={e.html} /> : <EmptyState title="No HTML part">This email was sent as plain text only.</EmptyState>}
        </Tabs.Panel>
        <Tabs.Panel value="text" pt="sm">
          {e.text ? (
            <Code block style={{ whiteSpace: 'pre-wrap' }}>
              {e.text}
            </Code>
          ) : (
            <EmptyState title="No text part">This email has no plain-text part.</EmptyState>
          )}
        </Tabs.Panel>
        <Tabs.Panel value="headers" pt="sm">
          {/* Values break anywhere (Mono), so the table fits a phone without scrolling sideways. */}
          <Table verticalSpacing={4}>
            <Table.Tbody>
              {e.headers.map((h, index) => (
                <Table.Tr key={`${h.name}-${index}`}>
                  <Table.Td style={{ whiteSpace: 'nowrap', verticalAlign: 'top' }}>
                    <Mono size="xs">{h.name}</Mono>
                  </Table.Td>
                  <Table.Td>
                    <Mono size="xs">{h.value}</Mono>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Tabs.Panel>
      </Tabs>
    </>
  );
}
