import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Live counts of a server's sockets and answers, so a test can prove a client released them. */
export interface ConnectionCounts {
  /** Sockets accepted and not yet closed or destroyed, idle keep-alive ones included. */
  open(): number;
  /** Requests whose answer has neither finished nor been dropped. */
  active(): number;
}

/** Starts counting; call before `listen` so that no connection is missed. */
export function trackConnections(server: Server): ConnectionCounts {
  const sockets = new Set<Socket>();
  let active = 0;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (_incoming, outgoing) => {
    active += 1;
    // 'close' comes once per answer, whether it finished or the client went away first.
    outgoing.once('close', () => {
      active -= 1;
    });
  });
  return {
    open() {
      // Destroyed counts as closed: its 'close' event comes a tick later, after close() resolved.
      let open = 0;
      for (const socket of sockets) if (!socket.destroyed) open += 1;
      return open;
    },
    active: () => active,
  };
}
