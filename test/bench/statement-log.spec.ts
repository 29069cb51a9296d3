import { statementTotals } from './statement-log';

const log = `2026-11-29 16:17:20.715 UTC [2195] LOG:  received SIGHUP, reloading configuration files
2026-11-29 16:17:21.001 UTC [3001] LOG:  duration: 0.120 ms  parse <unnamed>: SELECT team_id
	  FROM broadcast_recipients WHERE email_id = $1
2026-11-29 16:17:21.002 UTC [3001] LOG:  duration: 0.080 ms  bind <unnamed>: SELECT team_id FROM broadcast_recipients WHERE email_id = $1
2026-11-29 16:17:21.002 UTC [3001] DETAIL:  parameters: $1 = '0196'
2026-11-29 16:17:21.003 UTC [3001] LOG:  duration: 0.030 ms  execute <unnamed>: SELECT team_id FROM broadcast_recipients WHERE email_id = $1
2026-11-29 16:17:21.004 UTC [3001] LOG:  duration: 0.110 ms  parse <unnamed>: SELECT team_id FROM broadcast_recipients WHERE email_id = $1
2026-11-29 16:17:21.005 UTC [3002] LOG:  duration: 0.040 ms  execute claim_recipients: UPDATE email_recipients SET status = 'sending'
2026-11-29 16:17:21.006 UTC [3002] LOG:  duration: 0.900 ms  statement: COMMIT
`;

describe('statementTotals', () => {
  it('sums each statement per phase, joining continuation lines and telling prepared statements from text', () => {
    const totals = statementTotals(log);
    const parse = totals.find((t) => t.phase === 'parse')!;
    expect(parse).toEqual({
      phase: 'parse',
      named: false,
      statement: 'SELECT team_id FROM broadcast_recipients WHERE email_id = $1',
      runs: 2,
      totalMs: expect.closeTo(0.23, 6),
    });
    expect(totals.find((t) => t.phase === 'execute' && t.named)).toMatchObject({
      statement: "UPDATE email_recipients SET status = 'sending'",
      runs: 1,
    });
    expect(totals[0]).toMatchObject({ phase: 'statement', named: false, statement: 'COMMIT', runs: 1 });
    // A DETAIL line (the parameters) holds no duration and counts for nothing.
    expect(totals.reduce((n, t) => n + t.runs, 0)).toBe(6);
  });
});
