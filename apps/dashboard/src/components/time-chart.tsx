import { Group, Text } from '@mantine/core';
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** A dashed line: the thresholds drawn over a rate. */
  dash?: number[];
  /** The line into the bucket still in progress: dashed, its point shown, left out of the legend (`note` explains it). */
  partial?: boolean;
}

/**
 * A time series chart (uPlot: canvas, 50 KB, imported only by the pages that draw one, so it stays
 * out of the initial bundle). It fills its container's width and follows it when it changes.
 * Canvas is invisible to assistive technology: `summary` says in words what the chart shows, and
 * the legend is ordinary text.
 */
export function TimeChart({
  title,
  summary,
  x,
  series,
  format,
  note,
  height = 200,
}: {
  title: string;
  summary: string;
  /** Bucket starts, in seconds. */
  x: number[];
  series: ChartSeries[];
  format: (value: number) => string;
  /** A last legend entry in words (e.g. what the partial bucket's dashes mean). */
  note?: string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const axis = { stroke: '#495057', grid: { stroke: '#e9ecef', width: 1 }, ticks: { stroke: '#dee2e6', width: 1 } };
    const chart = new uPlot(
      {
        width: Math.max(el.clientWidth, 200),
        height,
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
        axes: [axis, { ...axis, size: 60, values: (_u, values) => values.map(format) }],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: s.dash ? 1.5 : 2,
            dash: s.partial ? [3, 3] : s.dash,
            points: { show: Boolean(s.partial), size: 5, fill: s.color },
          })),
        ],
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(el.clientWidth, 200), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [x, series, format, height]);
  const legend = series.filter((s) => !s.partial);
  return (
    <figure style={{ margin: 0, minWidth: 0 }}>
      <figcaption>
        <Text fw={600} size="sm">
          {title}
        </Text>
        <Group gap="sm" mt={2} mb={4}>
          {legend.map((s) => (
            <Group key={s.label} gap={4} wrap="nowrap">
              <span
                aria-hidden
                style={{ width: 14, height: 0, borderTop: `3px ${s.dash ? 'dashed' : 'solid'} ${s.color}`, display: 'inline-block' }}
              />
              <Text size="xs">{s.label}</Text>
            </Group>
          ))}
          {note && (
            <Text size="xs" c="dimmed">
              {note}
            </Text>
          )}
        </Group>
      </figcaption>
      <div ref={box} role="img" aria-label={summary} style={{ width: '100%' }} />
    </figure>
  );
}
