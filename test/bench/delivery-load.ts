import { sampleEmail } from './bench-load';
import type { ServerProcess } from './bench-processes';
import { BATCH_SIZE, DOMAINS, domainName, options } from './delivery-options';

// The delivery bench's load: its emails, and their submission through POST /emails/batch.

// ~9 KB more of HTML and a ~3 KB text part on top of the API bench's ~1 KB receipt: a typical
// newsletter-sized transactional email (~10 KB of content, ~14 KB on the wire once encoded).
const EXTRA_HTML = Array.from(
  { length: 24 },
  (_, i) =>
    `<tr><td style="padding:6px 0;border-bottom:1px solid #eee">Usage line ${i + 1}: API requests in region us-east-1, ` +
    `tier ${i % 4}, billed per thousand</td><td style="text-align:right">${(i * 1.37).toFixed(2)}</td></tr>`,
).join('');
const HTML_TAIL = `<table style="width:100%;border-collapse:collapse;font-size:13px">${EXTRA_HTML}</table>`;
const TEXT = Array.from(
  { length: 24 },
  (_, i) => `Usage line ${i + 1}: API requests in region us-east-1, tier ${i % 4}, billed per thousand ... ${(i * 1.37).toFixed(2)}`,
).join('\n');

let emailNumber = 0;
/** The next email: one recipient, round-robin over the 50 domains. */
function nextEmail(domain: string): Record<string, unknown> {
  const n = emailNumber++;
  const base = sampleEmail(domain, n);
  return {
    ...base,
    to: [`user${n}@${domainName(n % DOMAINS)}`],
    html: (base.html as string).replace('</body></html>', `${HTML_TAIL}</body></html>`),
    text: `Your receipt #${100_000 + n}\n\n${TEXT}\n\n${TEXT}`,
  };
}

export interface Submission {
  /** Accepted email id → Date.now() when its batch was answered 2xx. */
  accepted: Map<string, number>;
  firstSubmit: number;
  firstAccept: number;
  lastAccept: number;
  requests: number;
  /** `status` or error message → count. */
  failures: Record<string, number>;
}

const newSubmission = (): Submission => ({
  accepted: new Map(),
  firstSubmit: 0,
  firstAccept: 0,
  lastAccept: 0,
  requests: 0,
  failures: {},
});

async function postBatch(api: ServerProcess, token: string, domain: string, size: number, into: Submission): Promise<void> {
  const body = JSON.stringify(Array.from({ length: size }, () => nextEmail(domain)));
  if (!into.firstSubmit) into.firstSubmit = Date.now();
  into.requests++;
  try {
    const response = await fetch(`${api.url}/emails/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    const at = Date.now();
    if (!response.ok) {
      into.failures[response.status] = (into.failures[response.status] ?? 0) + 1;
      if (Object.values(into.failures).reduce((a, b) => a + b, 0) <= 3)
        process.stderr.write(`bench: POST /emails/batch ${response.status}: ${text.slice(0, 300)}\n`);
      return;
    }
    if (!into.firstAccept) into.firstAccept = at;
    into.lastAccept = at;
    for (const { id } of (JSON.parse(text) as { data: { id: string }[] }).data) into.accepted.set(id, at);
  } catch (error) {
    const key = (error as Error).message;
    into.failures[key] = (into.failures[key] ?? 0) + 1;
  }
}

/** `total` emails, 100 per call, `connections` calls in flight: as fast as the API takes them. */
export async function submitAtOnce(api: ServerProcess, token: string, domain: string, total: number): Promise<Submission> {
  const s = newSubmission();
  let left = total;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (left > 0) {
        const size = Math.min(BATCH_SIZE, left);
        left -= size;
        await postBatch(api, token, domain, size, s);
      }
    }),
  );
  return s;
}

/** `rate` emails/s for `seconds`, as batches due on a fixed schedule (at most 32 calls in flight). */
export async function submitPaced(
  api: ServerProcess,
  token: string,
  domain: string,
  rate: number,
  seconds: number,
): Promise<Submission & { behindMs: number }> {
  const s = newSubmission();
  const size = Math.max(10, Math.min(BATCH_SIZE, Math.round(rate / 20)));
  const batches = Math.ceil((rate * seconds) / size);
  const start = Date.now();
  const inFlight = new Set<Promise<void>>();
  let behindMs = 0;
  for (let i = 0; i < batches; i++) {
    const due = start + (i * size * 1000) / rate;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    while (inFlight.size >= 32) await Promise.race(inFlight);
    behindMs = Math.max(behindMs, Date.now() - due);
    const p: Promise<void> = postBatch(api, token, domain, size, s).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return { ...s, behindMs };
}
