import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';

/**
 * The fake's `/ws`: a socket per client id (`?clientId=`, else a fresh one), greeted with `status`
 * and its sid, and the feature-flag handshake. Messages go to one client or, without one, to all.
 */

/** Binary frame event types (server.py BinaryEventTypes). */
export const PREVIEW_IMAGE = 1;
export const PREVIEW_IMAGE_WITH_METADATA = 4;

export class SocketHub {
  private readonly server = new WebSocketServer({ noServer: true });
  private readonly sockets = new Map<string, WebSocket>();
  private readonly flags = new Map<string, Record<string, unknown>>();
  /** Switched on by the fault switches: nothing is sent while silent. */
  silent = false;
  connections = 0;

  constructor(
    private readonly greeting: (sid: string) => readonly { type: string; data: unknown }[],
    private readonly features: Record<string, unknown>,
  ) {}

  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.server.handleUpgrade(request, socket, head, (ws) => {
      const query = new URL(request.url ?? '/', 'http://fake').searchParams;
      const sid = query.get('clientId') || randomUUID().replaceAll('-', '');
      this.sockets.set(sid, ws);
      this.flags.set(sid, {});
      this.connections += 1;
      let first = true;
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        const message = parse(data.toString());
        if (first && message?.type === 'feature_flags') {
          this.flags.set(sid, (message.data ?? {}) as Record<string, unknown>);
          this.send('feature_flags', this.features, sid);
        }
        first = false;
      });
      ws.on('error', () => {});
      ws.on('close', () => {
        if (this.sockets.get(sid) !== ws) return;
        this.sockets.delete(sid);
        this.flags.delete(sid);
      });
      for (const { type, data } of this.greeting(sid)) this.send(type, data, sid);
    });
  }

  /** A text message to one client (sid) or every client (no sid). */
  send(type: string, data: unknown, sid?: string): void {
    this.deliver(JSON.stringify({ type, data }), sid);
  }

  /** A binary frame: the 4-byte big-endian event type, then the payload. */
  sendBinary(event: number, payload: Buffer, sid?: string): void {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(event);
    this.deliver(Buffer.concat([header, payload]), sid);
  }

  get open(): number {
    return this.sockets.size;
  }

  /** Whether the client asked for previews with metadata (feature_flags). */
  wantsPreviewMetadata(sid: string | undefined): boolean {
    return sid !== undefined && this.flags.get(sid)?.['supports_preview_metadata'] === true;
  }

  /** Cuts every socket off, as a network drop or a restart does. */
  dropAll(): void {
    for (const ws of this.sockets.values()) ws.terminate();
    this.sockets.clear();
    this.flags.clear();
  }

  close(): void {
    this.dropAll();
    this.server.close();
  }

  private deliver(frame: string | Buffer, sid: string | undefined): void {
    if (this.silent) return;
    const targets = sid === undefined ? [...this.sockets.values()] : [this.sockets.get(sid)];
    for (const ws of targets) if (ws?.readyState === WebSocket.OPEN) ws.send(frame);
  }
}

function parse(text: string): { type?: unknown; data?: unknown } | undefined {
  try {
    return JSON.parse(text) as { type?: unknown; data?: unknown };
  } catch {
    return undefined;
  }
}
