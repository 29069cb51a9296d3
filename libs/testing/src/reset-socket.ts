import type { Socket } from 'node:net';

/**
 * Drops a connection with a TCP reset (RST), as a crashed host or a cut network does, and always
 * closes the socket.
 *
 * Not `socket.resetAndDestroy()` alone: on a socket whose FIN is in flight (it was ended, by us or
 * by Node answering the peer's FIN), libuv refuses the reset (`uv_tcp_close_reset`: EINVAL while a
 * shutdown is pending) and Node 20 still marks the handle closing without closing it. The socket
 * says destroyed, its fd stays open, its 'close' never comes (a `server.close()` waiting for it
 * never returns), and at exit Node's handle cleanup waits for it forever, spinning on the clock
 * (the jest process of the fault suites that never exited, issue 17). Such a socket has sent its
 * FIN already: a plain destroy closes it.
 */
export function resetSocket(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded || socket.connecting) socket.destroy();
  else socket.resetAndDestroy();
}
