import type { EmailStore } from '@herald/messages';
import type { AcceptedEmail } from './email.types';
import { EmailWriter } from './email-writer';

/** A repository whose statements finish when the test says so. */
class ScriptedRepository {
  readonly statements: { ids: string[]; finish: (error?: Error) => void }[] = [];

  insert(emails: AcceptedEmail[]): Promise<[]> {
    return new Promise((resolve, reject) => {
      this.statements.push({ ids: emails.map((e) => e.id), finish: (error) => (error ? reject(error) : resolve([])) });
    });
  }
}

const email = (id: string, sizeBytes = 1000) => ({ id, email: { sizeBytes } }) as unknown as AcceptedEmail;
const emails = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => email(`${prefix}${i}`));
const tick = () => new Promise((r) => setImmediate(r));

function setup() {
  const repo = new ScriptedRepository();
  return { repo, writer: new EmailWriter(repo as unknown as EmailStore) };
}

/** Records the order in which insert() calls settle. */
function track(writer: EmailWriter, rows: AcceptedEmail[], log: string[]): Promise<void> {
  return writer.insert(rows).then(
    () => void log.push(`ok ${rows[0].id}`),
    (e: Error) => void log.push(`failed ${rows[0].id}: ${e.message}`),
  );
}

describe('EmailWriter', () => {
  it('writes a lone request at once, in a statement of its own', async () => {
    const { repo, writer } = setup();
    const done = writer.insert([email('a')]);
    expect(repo.statements.map((s) => s.ids)).toEqual([['a']]);
    repo.statements[0].finish();
    await expect(done).resolves.toEqual([]);
  });

  it('lets requests that arrive while two statements run share the next one, and settles each after its commit', async () => {
    const { repo, writer } = setup();
    const log: string[] = [];
    const all = ['a', 'b', 'c', 'd', 'e'].map((id) => track(writer, [email(id)], log));
    expect(repo.statements.map((s) => s.ids)).toEqual([['a'], ['b']]);

    repo.statements[1].finish();
    await tick();
    expect(log).toEqual(['ok b']);
    expect(repo.statements.map((s) => s.ids)).toEqual([['a'], ['b'], ['c', 'd', 'e']]);

    repo.statements[2].finish();
    await tick();
    expect(log).toEqual(['ok b', 'ok c', 'ok d', 'ok e']);
    repo.statements[0].finish();
    await Promise.all(all);
    expect(log).toEqual(['ok b', 'ok c', 'ok d', 'ok e', 'ok a']);
  });

  it('keeps the emails of one request together and caps a shared statement at 500 emails', async () => {
    const { repo, writer } = setup();
    writer.insert([email('x')]).catch(() => undefined);
    writer.insert([email('y')]).catch(() => undefined);
    const batches = Array.from({ length: 7 }, (_, i) => writer.insert(emails(`r${i}-`, 100)));
    repo.statements[0].finish();
    await tick();
    repo.statements[1].finish();
    await tick();
    const sizes = repo.statements.slice(2).map((s) => s.ids.length);
    expect(sizes).toEqual([500, 200]);
    repo.statements.slice(2).forEach((s) => s.finish());
    await Promise.all(batches);
  });

  it('retries a failed shared statement one request at a time, so only the refused request fails', async () => {
    const { repo, writer } = setup();
    const log: string[] = [];
    const all = ['a', 'b', 'c', 'bad', 'd'].map((id) => track(writer, [email(id)], log));
    repo.statements[0].finish();
    repo.statements[1].finish();
    await tick();
    expect(repo.statements[2].ids).toEqual(['c', 'bad', 'd']);

    repo.statements[2].finish(new Error('invalid byte sequence'));
    await tick();
    expect(repo.statements.slice(3).map((s) => s.ids)).toEqual([['c'], ['bad'], ['d']]);
    repo.statements[3].finish();
    repo.statements[4].finish(new Error('invalid byte sequence'));
    repo.statements[5].finish();
    await Promise.all(all);
    expect(log.sort()).toEqual(['failed bad: invalid byte sequence', 'ok a', 'ok b', 'ok c', 'ok d']);
  });

  it('rejects a lone request with its own error, without retrying it', async () => {
    const { repo, writer } = setup();
    const done = writer.insert([email('a')]);
    repo.statements[0].finish(new Error('connection terminated'));
    await expect(done).rejects.toThrow('connection terminated');
    expect(repo.statements).toHaveLength(1);
  });

  it("never shares a statement between regions, and runs two statements per region: another region's busy statements hold none of this one's", async () => {
    const { repo, writer } = setup();
    const log: string[] = [];
    const inRegion = (id: string, region: string) => ({ ...email(id), region }) as AcceptedEmail;
    const far = ['f1', 'f2', 'f3'].map((id) => track(writer, [inRegion(id, 'eu-west-1')], log));
    const near = ['n1', 'n2', 'n3', 'n4'].map((id) => track(writer, [inRegion(id, 'us-east-1')], log));
    // eu-west-1's two slots are taken (its third waits); us-east-1's two run beside them.
    expect(repo.statements.map((s) => s.ids)).toEqual([['f1'], ['f2'], ['n1'], ['n2']]);

    repo.statements[2].finish();
    await tick();
    // us-east-1's next statement takes both of its waiting requests, and none of eu-west-1's.
    expect(repo.statements.map((s) => s.ids).slice(4)).toEqual([['n3', 'n4']]);
    for (const statement of repo.statements.slice(3)) statement.finish();
    await tick();
    expect(log.sort()).toEqual(['ok n1', 'ok n2', 'ok n3', 'ok n4']);

    repo.statements[0].finish();
    await tick();
    expect(repo.statements.map((s) => s.ids).slice(5)).toEqual([['f3']]);
    for (const statement of [repo.statements[1], repo.statements[5]]) statement.finish();
    await Promise.all([...far, ...near]);
    expect(log).toHaveLength(7);
  });
});
