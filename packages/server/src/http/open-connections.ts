/**
 * An HTTP server's open connections: what they are doing, for a drain that waits on them, and an
 * end to the ones that stall a close.
 *
 * A Fastify close stops taking connections, ends the idle kept-alive ones and waits for the rest.
 * A connection whose request has not fully arrived is not idle to Node, and once close() has
 * begun Node no longer times it out (its headersTimeout check stops with the server): one client
 * that sends half a request would hold the close, and so a SIGTERM drain, until it hangs up. From
 * the start of a close such a connection gets a grace to finish its request (it is answered 503,
 * Connection: close), and is then ended; so is a kept-alive one that turns idle after the close
 * began, which would otherwise wait for its keep-alive timeout. Answers in progress are the
 * routes' own, bounded by them, and are left to finish, including one its route has ended that a
 * slow reader is still receiving. (Node's own close, on Node 20, ends that last kind at once if it
 * is in progress when the close begins: it counts them idle. That is Node's, and not changed here.)
 *
 * Watching costs a listener per connection, never per request: each socket's answer in progress
 * is read, when asked, from Node's own bookkeeping (the response a socket is writing).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How long a closing server waits for a request that has not fully arrived. */
const CLOSE_GRACE_MS = 5_000;
/** How many open connections a description names; the rest are counted. */
const NAMED = 5;

/** Node's ServerResponse on the socket it is writing, with the request it answers. */
interface AnswerInProgress {
  /**
   * True once all of it has left the socket. `finished` turns true when the route ends it, while a
   * slow reader may still be owed most of it: until then it is an answer in progress.
   */
  readonly writableFinished?: boolean;
  readonly req?: { readonly method?: string; readonly url?: string; readonly complete?: boolean };
}

export interface OpenConnections {
  /** One line: how many are open, and what the first few are doing. */
  describe(): string;
  /** Ends every connection with no request fully arrived, which no answer can be on its way to. */
  endUnanswered(): number;
}

const answerOf = (socket: Socket) => {
  const answer = (socket as Socket & { _httpMessage?: AnswerInProgress | null })._httpMessage;
  return answer && !answer.writableFinished && answer.req ? answer : null;
};

/** Starts watching `server`'s connections (before it listens, to see every one). */
export function watchConnections(server: Server): OpenConnections {
  const open = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    open.set(socket, Date.now());
    socket.once('close', () => open.delete(socket));
  });
  return {
    describe() {
      if (open.size === 0) return 'no connection open';
      const at = Date.now();
      const named = [...open].slice(0, NAMED).map(([socket, openedAt]) => {
        const who = `${socket.remoteAddress}:${socket.remotePort}`;
        const age = `open ${Math.round((at - openedAt) / 1000)} s`;
        const answer = answerOf(socket);
        if (!answer) return `${who} with no answer in progress, ${age}, ${socket.bytesRead} bytes read`;
        const arriving = answer.req!.complete === false ? ' (its body still arriving)' : '';
        return `${who} answering ${answer.req!.method} ${answer.req!.url}${arriving}, ${age}`;
      });
      const more = open.size > NAMED ? `; and ${open.size - NAMED} more` : '';
      return `${open.size} connection${open.size === 1 ? '' : 's'} open: ${named.join('; ')}${more}`;
    },
    endUnanswered() {
      let ended = 0;
      for (const socket of open.keys()) {
        const answer = answerOf(socket);
        if (answer && answer.req!.complete !== false) continue;
        socket.destroy();
        ended++;
      }
      return ended;
    },
  };
}

/**
 * Watches `app`'s connections and, once its close begins, ends every `graceMs` those with no
 * request fully arrived: half requests, bodies that stopped coming, and connections idle since
 * their answer. Answers what it watches (for a drain's log).
 */
export function endStalledConnectionsOnClose(
  app: FastifyInstance,
  graceMs = CLOSE_GRACE_MS,
): OpenConnections {
  const connections = watchConnections(app.server);
  let timer: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    // Every grace, again: a kept-alive connection whose answer ends after the close began turns
    // idle and would otherwise wait for its keep-alive timeout.
    timer = setInterval(() => connections.endUnanswered(), graceMs);
    // A close that ends sooner does not keep the process for it.
    timer.unref();
    done();
  });
  // Fastify closes its server in its last onClose hook; the server's own event is the end.
  app.server.once('close', () => clearInterval(timer));
  return connections;
}
