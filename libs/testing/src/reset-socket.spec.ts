import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { resetSocket } from './reset-socket';

describe('resetSocket', () => {
  let server: Server;
  let accepted: Promise<Socket>;

  beforeEach(async () => {
    server = createServer();
    accepted = once(server, 'connection').then(([s]) => (s as Socket).on('error', () => undefined));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const connect = async () => {
    const client = createConnection({ host: '127.0.0.1', port: (server.address() as { port: number }).port });
    const errors: string[] = [];
    client.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
    await once(client, 'connect');
    return { client, errors, socket: await accepted };
  };

  it('resets an open connection: the peer sees ECONNRESET', async () => {
    const { client, errors, socket } = await connect();
    const clientClosed = new Promise((resolve) => client.on('close', resolve));
    resetSocket(socket);
    await once(socket, 'close');
    await clientClosed;
    expect(errors).toEqual(['ECONNRESET']);
  });

  it('closes a socket whose FIN is in flight (where resetAndDestroy leaves its handle open for ever)', async () => {
    const { client, socket } = await connect();
    client.resume();
    client.on('end', () => client.destroy());
    socket.write('bye');
    socket.end();
    const closed = once(socket, 'close');
    resetSocket(socket);
    // Within the test's time: with resetAndDestroy, 'close' never comes and server.close() never returns.
    await closed;
    expect(socket.destroyed).toBe(true);
  });
});
