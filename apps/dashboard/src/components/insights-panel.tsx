import { Badge, Code, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useTeamQuery } from '../lib/queries';
import type { Insight } from '../lib/types';
import { ErrorAlert } from './ui';

const SEVERITY = {
  attention: { label: 'Needs attention', color: 'red' },
  improvement: { label: 'Improvement', color: 'blue' },
} as const;

/** The API's words with their `code` spans (header names, record values) set as code. */
function Words({ text }: { text: string }) {
  return (
    <>
      {text.split('`').map((part, index) =>
        index % 2 ? (
          <Code key={index} style={{ wordBreak: 'break-all' }}>
            {part}
          </Code>
        ) : (
          part
        ),
      )}
    </>
  );
}

function InsightItem({ insight }: { insight: Insight }) {
  const severity = SEVERITY[insight.severity] ?? SEVERITY.improvement;
  return (
    <Stack component="li" gap={4} data-insight={insight.id} py="xs" style={{ borderTop: '1px solid var(--mantine-color-gray-2)' }}>
      <Group gap="xs" wrap="wrap">
        {/* The dot variant: the colour in the dot, the words in body text colour (AA contrast). */}
        <Badge color={severity.color} variant="dot" radius="sm" tt="none" fw={600} style={{ flexShrink: 0 }}>
          {severity.label}
        </Badge>
        <Text size="xs" c="dimmed" ff="monospace">
          {insight.id}
        </Text>
      </Group>
      <Text size="sm" style={{ wordBreak: 'break-word' }}>
        <Words text={insight.found} />
      </Text>
      <Text size="sm" c="dimmed" style={{ wordBreak: 'break-word' }}>
        <Text span fw={600} c="var(--mantine-color-text)">
          How to fix:{' '}
        </Text>
        <Words text={insight.fix} />
      </Text>
    </Stack>
  );
}

/** An email's deliverability insights: what was found and how to fix it, attention first. */
export function InsightsPanel({ emailId }: { emailId: string }) {
  const insights = useTeamQuery<{ object: 'list'; data: Insight[] }>(`/emails/${emailId}/insights`, undefined, { refetchInterval: 10_000 });
  return (
    <Paper withBorder p="md" mb="md" component="section" aria-labelledby="insights-heading">
      <Title order={2} size="h5" id="insights-heading" mb="xs">
        Insights
      </Title>
      {insights.error ? (
        <ErrorAlert error={insights.error} title="The insights could not load" />
      ) : !insights.data ? (
        <Text size="sm" c="dimmed">
          Checking this email…
        </Text>
      ) : insights.data.data.length === 0 ? (
        <Stack gap={2}>
          <Text fw={600} size="sm">
            No issues found
          </Text>
          <Text size="sm" c="dimmed">
            Herald checked this email&apos;s content, its sending domain and DMARC, and its recipients, and found nothing to fix. Bounces, deferrals
            and delivery without TLS show here as they happen.
          </Text>
        </Stack>
      ) : (
        <Stack component="ul" gap={0} m={0} p={0} style={{ listStyle: 'none' }} aria-label="Insights found">
          {insights.data.data.map((insight) => (
            <InsightItem key={insight.id} insight={insight} />
          ))}
        </Stack>
      )}
    </Paper>
  );
}
