import { Button, Group, Paper, SegmentedControl, Select, SimpleGrid, Stack, Text } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useEffect, useMemo, useState } from 'react';
import { TimeChart, type ChartSeries } from '../components/time-chart';
import { EmptyState, ErrorAlert, PageHeader } from '../components/ui';
import type { List } from '../lib/api';
import { useRegions, useTeamId, useTeamQuery } from '../lib/queries';
import { HOUR, partialBucket, splitAtPartial, statsWindow } from '../lib/stats-window';
import type { Domain, Stats, StatsCounts } from '../lib/types';

const RANGES = {
  '24h': { label: '24 h', ms: 24 * HOUR, granularity: 'hour' },
  '7d': { label: '7 d', ms: 7 * 24 * HOUR, granularity: 'hour' },
  '30d': { label: '30 d', ms: 30 * 24 * HOUR, granularity: 'day' },
} as const;
type Range = keyof typeof RANGES;

/** The bulk-sender guidance (Gmail, Yahoo): complaints under 0.1%, never 0.3%; bounces under 4%. */
const COMPLAINT_TARGET = 0.1;
const COMPLAINT_LIMIT = 0.3;
const BOUNCE_LIMIT = 4;

const COLORS = {
  sent: '#1c7ed6',
  delivered: '#2b8a3e',
  bounced: '#c92a2a',
  complained: '#e8590c',
  machine: '#868e96',
  clicks: '#7048e8',
  limit: '#c92a2a',
  target: '#e67700',
};

const percentOf = (part: number, whole: number): number | null => (whole > 0 ? (part / whole) * 100 : null);
const bounced = (c: StatsCounts) => c.bounced_hard + c.bounced_soft;
const formatPercent = (v: number) => `${Math.round(v * 100) / 100}%`;
const formatCount = (v: number) => (Math.abs(v) >= 1000 ? `${Math.round(v / 100) / 10}k` : String(Math.round(v)));
const shownRate = (rate: number | null) => (rate === null ? '–' : formatPercent(rate * 100));

export function MetricsPage() {
  const teamId = useTeamId();
  const [range, setRange] = useState<Range>('7d');
  const [domainId, setDomainId] = useState<string | null>(null);
  const [region, setRegion] = useState<string | null>(null);
  const domains = useTeamQuery<List<Domain>>('/domains');
  const regions = useRegions();
  const now = useMinuteClock();
  // The window moves on when a new hour begins (not every minute, so the query key stays put in between).
  const hour = Math.floor(now / HOUR);
  const query = useMemo(() => {
    const { ms, granularity } = RANGES[range];
    const { from, to } = statsWindow(hour * HOUR, ms);
    return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), granularity, domain_id: domainId, region };
  }, [range, domainId, region, hour]);
  const stats = useTeamQuery<Stats>('/stats', query, { refetchInterval: 60_000 });

  return (
    <>
      <PageHeader title="Metrics" description="Volume, delivery, bounces, complaints, opens and clicks over time, from every region's events." />
      <Group gap="sm" mb="md" align="flex-end" wrap="wrap">
        <Stack gap={4}>
          <Text size="sm" fw={500} id="metrics-range">
            Range
          </Text>
          <SegmentedControl
            aria-labelledby="metrics-range"
            value={range}
            onChange={(value) => setRange(value as Range)}
            data={Object.entries(RANGES).map(([value, r]) => ({ value, label: r.label }))}
          />
        </Stack>
        <Select
          label="Domain"
          placeholder="All domains"
          clearable
          data={(domains.data?.data ?? []).map((d) => ({ value: d.id, label: d.name }))}
          value={domainId}
          onChange={setDomainId}
          w={220}
        />
        <Select label="Region" placeholder="All regions" clearable data={regions.data?.data ?? []} value={region} onChange={setRegion} w={180} />
      </Group>
      <ErrorAlert error={stats.error} title="The metrics could not load" />
      {stats.data && <MetricsBody stats={stats.data} teamId={teamId} now={now} />}
    </>
  );
}

/** Now, updated every minute. */
function useMinuteClock(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

function MetricsBody({ stats, teamId, now }: { stats: Stats; teamId: string; now: number }) {
  const partial = partialBucket(
    stats.data.map((b) => b.timestamp),
    stats.granularity,
    now,
  );
  const charts = useMemo(() => chartsOf(stats, partial), [stats, partial]);
  const t = stats.totals;
  const anything = stats.data.some((b) => b.sent || b.delivered || bounced(b) || b.complained || b.opened_human || b.clicked_human);
  if (!anything) {
    return (
      <EmptyState
        title="Nothing sent in this range"
        action={
          <Button component={Link} to={`/t/${teamId}/domains`} variant="light">
            Go to Domains
          </Button>
        }
      >
        Metrics appear here within a minute of sending. Send from a verified domain with POST /emails, the Resend SDKs or SMTP; if you sent earlier,
        choose a longer range or all domains and regions.
      </EmptyState>
    );
  }
  const tiles: [string, string, string?][] = [
    ['Sent', t.sent.toLocaleString()],
    ['Delivery rate', shownRate(t.delivery_rate), `${t.delivered.toLocaleString()} delivered`],
    ['Bounce rate', shownRate(t.bounce_rate), `limit ${BOUNCE_LIMIT}%`],
    ['Complaint rate', shownRate(t.complaint_rate), `aim under ${COMPLAINT_TARGET}%, limit ${COMPLAINT_LIMIT}%`],
    ['Unique opens', t.opened_human_unique.toLocaleString(), `${t.opened_machine.toLocaleString()} machine opens`],
    ['Unique clicks', t.clicked_human_unique.toLocaleString(), `${t.clicked_machine.toLocaleString()} scanner clicks`],
  ];
  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 2, sm: 3, lg: 6 }} spacing="sm">
        {tiles.map(([label, value, note]) => (
          <Paper key={label} withBorder p="sm" radius="md">
            <Text size="xs" c="dimmed" fw={600}>
              {label}
            </Text>
            <Text size="xl" fw={700}>
              {value}
            </Text>
            {note && (
              <Text size="xs" c="dimmed">
                {note}
              </Text>
            )}
          </Paper>
        ))}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="md">
        {charts.map((chart) => (
          <Paper key={chart.title} withBorder p="sm" radius="md">
            <TimeChart {...chart} />
          </Paper>
        ))}
      </SimpleGrid>
    </Stack>
  );
}

interface Chart {
  title: string;
  summary: string;
  x: number[];
  series: ChartSeries[];
  format: (value: number) => string;
  note?: string;
}

/**
 * The five charts. The bucket still in progress (`partial`, -1 for none) keeps its real count,
 * drawn dashed into a dot and named in the chart's summary, so it does not read as a drop.
 */
function chartsOf(stats: Stats, partial: number): Chart[] {
  const x = stats.data.map((b) => Date.parse(b.timestamp) / 1000);
  const per = stats.granularity === 'hour' ? 'per hour' : 'per day';
  const current = stats.granularity === 'hour' ? 'this hour' : 'today';
  const line = (value: number) => stats.data.map(() => value);
  const t = stats.totals;
  const now = partial >= 0 ? stats.data[partial] : undefined;
  const soFar = now
    ? ` ${current[0]!.toUpperCase()}${current.slice(1)} so far: ${now.sent} sent, ${now.delivered} delivered, ${bounced(now)} bounced, ${now.opened_human_unique} unique opens, ${now.clicked_human_unique} unique clicks.`
    : '';
  const charts: Chart[] = [
    {
      title: `Volume ${per}`,
      summary: `Recipients ${per}: ${t.sent} sent, ${t.delivered} delivered, ${bounced(t)} bounced, ${t.complained} complaints in the range.${soFar}`,
      x,
      format: formatCount,
      series: [
        { label: 'Sent', color: COLORS.sent, values: stats.data.map((b) => b.sent) },
        { label: 'Delivered', color: COLORS.delivered, values: stats.data.map((b) => b.delivered) },
        { label: 'Bounced', color: COLORS.bounced, values: stats.data.map(bounced) },
        { label: 'Complaints', color: COLORS.complained, values: stats.data.map((b) => b.complained) },
      ],
    },
    {
      title: 'Delivery rate',
      summary: `Delivered as a share of sent, ${per}; ${shownRate(t.delivery_rate)} over the range.`,
      x,
      format: formatPercent,
      series: [{ label: 'Delivered / sent', color: COLORS.delivered, values: stats.data.map((b) => percentOf(b.delivered, b.sent)) }],
    },
    {
      title: 'Bounce rate',
      summary: `Bounced as a share of sent, ${per}; ${shownRate(t.bounce_rate)} over the range, against the ${BOUNCE_LIMIT}% limit.`,
      x,
      format: formatPercent,
      series: [
        { label: 'Bounced / sent', color: COLORS.bounced, values: stats.data.map((b) => percentOf(bounced(b), b.sent)) },
        { label: `Limit ${BOUNCE_LIMIT}%`, color: COLORS.limit, dash: [6, 4], values: line(BOUNCE_LIMIT) },
      ],
    },
    {
      title: 'Complaint rate',
      summary: `Complaints as a share of delivered, ${per}; ${shownRate(t.complaint_rate)} over the range, against the ${COMPLAINT_TARGET}% target and the ${COMPLAINT_LIMIT}% limit.`,
      x,
      format: formatPercent,
      series: [
        { label: 'Complaints / delivered', color: COLORS.complained, values: stats.data.map((b) => percentOf(b.complained, b.delivered)) },
        { label: `Target ${COMPLAINT_TARGET}%`, color: COLORS.target, dash: [2, 3], values: line(COMPLAINT_TARGET) },
        { label: `Limit ${COMPLAINT_LIMIT}%`, color: COLORS.limit, dash: [6, 4], values: line(COMPLAINT_LIMIT) },
      ],
    },
    {
      title: `Opens and clicks ${per}`,
      summary: `${t.opened_human_unique} unique opens and ${t.clicked_human_unique} unique clicks by people, ${t.opened_machine} machine opens, in the range.${soFar}`,
      x,
      format: formatCount,
      series: [
        { label: 'Unique opens', color: COLORS.sent, values: stats.data.map((b) => b.opened_human_unique) },
        { label: 'Unique clicks', color: COLORS.clicks, values: stats.data.map((b) => b.clicked_human_unique) },
        { label: 'Machine opens', color: COLORS.machine, dash: [4, 3], values: stats.data.map((b) => b.opened_machine) },
      ],
    },
  ];
  if (partial < 0) return charts;
  const note = `Dashed to the dot: ${current} so far`;
  return charts.map((chart) => ({
    ...chart,
    note,
    series: chart.series.flatMap((s): ChartSeries[] => {
      // Thresholds are the same in every bucket: nothing partial about them.
      if (s.dash && s.values.every((v) => v === s.values[0])) return [s];
      const { complete, partial: inProgress } = splitAtPartial(s.values, partial);
      return inProgress
        ? [
            { ...s, values: complete },
            { ...s, label: `${s.label} (${current}, so far)`, values: inProgress, partial: true },
          ]
        : [s];
    }),
  }));
}
