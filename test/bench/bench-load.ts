import autocannon, { Result } from 'autocannon';
import { CpuSplit, meterCpu } from './cpu-meter';

/** One phase's figures, as printed and written to the results file. */
export interface LoadFigures {
  name: string;
  connections: number;
  seconds: number;
  requestsPerSecond: number;
  /** Accepted emails per second (2xx responses × emails per request); 0 for the bare server. */
  emailsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Responses of the served class (2xx, or 3xx for a redirect phase). */
  responses2xx: number;
  /** Responses of any other status, by status. */
  non2xx: Record<string, number>;
  errors: number;
  timeouts: number;
  /** CPU-seconds the phase cost the server, the load generator and the rest of the machine. */
  cpu: CpuSplit | null;
}

export interface LoadSpec {
  name: string;
  url: string;
  /** The server's process (the cluster primary, its workers counted too). */
  serverPid: number;
  path: string;
  /** POST unless told; a GET has no body. */
  method?: 'GET' | 'POST';
  body?: string;
  /** Requests cycle through these paths (each connection in turn) instead of `path` alone. */
  paths?: string[];
  /** The status class that counts as served: 2 (2xx, default) or 3 (redirects). */
  success?: 2 | 3;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  /** Emails one 2xx response accepted (1, or the batch size). */
  emailsPerRequest: number;
  /** Called with each 2xx response's body, to collect the accepted email ids. */
  onAccepted?: (body: string) => void;
  /** Headers made afresh for every request (a unique Idempotency-Key, say), beside `headers`. */
  perRequestHeaders?: () => Record<string, string>;
}

/** Runs autocannon for `seconds` and turns its result into figures. */
export async function load(spec: LoadSpec): Promise<LoadFigures> {
  const cpu = meterCpu(spec.serverPid);
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 30,
    requests: (spec.paths ?? [spec.path]).map((path) => ({
      method: spec.method ?? 'POST',
      path,
      headers: spec.method === 'GET' ? spec.headers : { 'content-type': 'application/json', ...spec.headers },
      body: spec.body,
      onResponse: spec.onAccepted && ((status, body) => status >= 200 && status < 300 && spec.onAccepted!(body)),
      ...(spec.perRequestHeaders && {
        setupRequest: (request: { headers?: Record<string, string> }) => ({
          ...request,
          headers: { ...request.headers, ...spec.perRequestHeaders!() },
        }),
      }),
    })),
  });
  return figures(spec, result, cpu());
}

function figures(spec: LoadSpec, result: Result, cpu: CpuSplit | null): LoadFigures {
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  const success = spec.success ?? 2;
  const served = success === 2 ? result['2xx'] : result['3xx'];
  const non2xx: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    if (!status.startsWith(String(success))) non2xx[status] = count;
  }
  return {
    name: spec.name,
    connections: spec.connections,
    seconds,
    requestsPerSecond: served / seconds,
    emailsPerSecond: spec.emailsPerRequest ? (served * spec.emailsPerRequest) / seconds : 0,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    responses2xx: served,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpu,
  };
}

/** A realistic small transactional email: one recipient, a subject, ~1 KB of HTML, one tag. */
export function sampleEmail(domain: string, n: number): Record<string, unknown> {
  const rows = [
    ['Scale plan, monthly', '$90.00'],
    ['Additional emails (12,400)', '$11.16'],
    ['Dedicated IP', '$30.00'],
  ]
    .map(([item, price]) => `<tr><td style="padding:4px 0">${item}</td><td style="text-align:right">${price}</td></tr>`)
    .join('');
  const html =
    `<!doctype html><html><body style="font-family:Helvetica,Arial,sans-serif;color:#222;margin:0;padding:24px">` +
    `<h1 style="font-size:20px">Your receipt #${100_000 + n}</h1>` +
    `<p>Hi Jane, thanks for your payment. Here is what it covered for the billing period ending 31 May:</p>` +
    `<table style="width:100%;border-collapse:collapse">${rows}` +
    `<tr><td style="padding-top:8px;border-top:1px solid #ddd"><b>Total</b></td><td style="text-align:right"><b>$131.16</b></td></tr></table>` +
    `<p>The invoice is attached to your account. Questions? Reply to this email and we will get back to you within a day.</p>` +
    `<p style="font-size:12px;color:#888">Acme Inc., 1 Market Street, San Francisco CA 94105. You receive this email because you have an Acme account.</p>` +
    `</body></html>`;
  return {
    from: `Acme Billing <billing@${domain}>`,
    to: [`jane.doe+${n}@example.com`],
    subject: `Your receipt #${100_000 + n}`,
    html,
    tags: [{ name: 'category', value: 'receipt' }],
  };
}
