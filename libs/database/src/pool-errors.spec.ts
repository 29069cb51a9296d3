import { createServer, type AddressInfo, type Server } from 'node:net';
import { Pool, type PoolConfig } from 'pg';
import { dataSourceOptions } from './data-source';
import type { DatabaseConfig } from './database.config';
import { isPostgresUnreachable } from './postgres-unavailable';

/** A protocol message: type byte, length, body. */
const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const AUTHENTICATION_OK = message('R', Buffer.from([0, 0, 0, 0]));
const READY_FOR_QUERY = message('Z', Buffer.from('I'));
const POSTMASTER_EXIT = message('E', Buffer.from('SFATAL\0C57P01\0Mterminating connection due to unexpected postmaster exit\0\0'));

/**
 * A scripted Postgres whose backend completes the startup and, in the same write, reports that
 * its postmaster died: what a backend of a Postgres killed under load sends.
 */
async function dyingPostgres(): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end(Buffer.concat([AUTHENTICATION_OK, READY_FOR_QUERY, POSTMASTER_EXIT])));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('the Postgres pool when a connection fails as it is handed out', () => {
  let server: Server;
  let pool: Pool | undefined;
  beforeAll(async () => {
    server = await dyingPostgres();
  });
  afterEach(async () => {
    await pool?.end().catch(() => undefined);
    pool = undefined;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const poolOptions = (): PoolConfig => {
    const { port } = server.address() as AddressInfo;
    const config = { DATABASE_URL: `postgres://herald@127.0.0.1:${port}/herald`, DATABASE_SCHEMA: 'public', DATABASE_POOL_SIZE: 2 } as DatabaseConfig;
    const { url, extra } = dataSourceOptions(config) as { url: string; extra: PoolConfig };
    return { ...extra, connectionString: url };
  };

  it("keeps the process alive: the connection's next statement fails as Postgres unreachable", async () => {
    pool = new Pool(poolOptions());
    pool.on('error', () => undefined);
    // The FATAL is parsed in the same read as ReadyForQuery, while the pool hands the connection
    // out: with no listener on it then, EventEmitter throws it and the process ends (jest reports
    // it as this test's failure).
    const connection = await pool.connect();
    const failed = await connection.query('SELECT 1').then(
      () => null,
      (error: Error) => error,
    );
    connection.release(true);
    expect(failed?.message).toBe('Client has encountered a connection error and is not queryable');
    expect(isPostgresUnreachable(failed)).toBe(true);
  });

  it('the pool drops the failed connection when it is released', async () => {
    pool = new Pool(poolOptions());
    pool.on('error', () => undefined);
    const connection = await pool.connect();
    await connection.query('SELECT 1').catch(() => undefined);
    connection.release();
    expect(pool.totalCount).toBe(0);
  });
});
