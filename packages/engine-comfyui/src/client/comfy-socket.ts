import WebSocket from 'ws';

/**
 * The server's `/ws?clientId=…` socket, shared by the prompts this client follows. It is open
 * while someone listens: it connects on the first listener, reconnects with backoff when it drops,
 * and closes a short while after the last listener leaves (so a backlog of prompts reuses it).
 * Binary frames (previews) are ignored: progress comes from the text messages.
 */

export interface SocketMessage {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export type SocketEvent =
  | { readonly kind: 'message'; readonly message: SocketMessage }
  /** The socket (re)connected: messages sent while it was down are lost. */
  | { readonly kind: 'open' }
  | { readonly kind: 'close' };

export interface SocketOptions {
  readonly url: URL;
  readonly clientId: string;
  readonly connectTimeoutMs: number;
  /** First reconnect delay; it doubles up to 16 times this. */
  readonly reconnectDelayMs: number;
  /** How long the socket stays open with no listener. */
  readonly lingerMs: number;
}

export class ComfySocket {
  private readonly listeners = new Set<(event: SocketEvent) => void>();
  private socket: WebSocket | undefined;
  private open = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private lingerTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: SocketOptions) {}

  /** Starts listening (connecting if needed); the returned function stops. */
  listen(listener: (event: SocketEvent) => void): () => void {
    this.listeners.add(listener);
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    if (!this.socket && !this.retryTimer) this.connect();
    return () => {
      if (!this.listeners.delete(listener)) return;
      if (this.listeners.size === 0 && !this.closed) {
        this.lingerTimer = setTimeout(() => this.disconnect(), this.options.lingerMs);
        this.lingerTimer.unref();
      }
    };
  }

  /** Waits (at most the connect timeout) for the socket to be open; false when it is not. */
  async ready(signal?: AbortSignal): Promise<boolean> {
    if (this.open) return true;
    if (this.closed) return false;
    if (this.retryTimer) {
      // A listener is waiting now: try at once rather than after the backoff.
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      this.connect();
    }
    return new Promise((resolve) => {
      const done = (opened: boolean) => {
        clearTimeout(timer);
        this.listeners.delete(watch);
        signal?.removeEventListener('abort', stop);
        resolve(opened);
      };
      const watch = (event: SocketEvent) => {
        if (event.kind === 'open') done(true);
      };
      const stop = () => done(false);
      const timer = setTimeout(stop, this.options.connectTimeoutMs);
      this.listeners.add(watch);
      signal?.addEventListener('abort', stop, { once: true });
    });
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.disconnect();
  }

  private connect(): void {
    if (this.closed) return;
    const url = new URL('ws', this.options.url);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('clientId', this.options.clientId);
    const socket = new WebSocket(url, { handshakeTimeout: this.options.connectTimeoutMs });
    this.socket = socket;
    socket.on('open', () => {
      this.open = true;
      this.failures = 0;
      this.emit({ kind: 'open' });
    });
    socket.on('message', (raw, isBinary) => {
      if (isBinary) return;
      const message = parseMessage(raw.toString());
      if (message) this.emit({ kind: 'message', message });
    });
    // 'error' is always followed by 'close'; listening keeps it from being thrown.
    socket.on('error', () => {});
    socket.on('close', () => {
      if (this.socket !== socket) return;
      const wasOpen = this.open;
      this.socket = undefined;
      this.open = false;
      if (wasOpen) this.emit({ kind: 'close' });
      this.scheduleReconnect();
    });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.listeners.size === 0) return;
    const delay = this.options.reconnectDelayMs * 2 ** Math.min(this.failures, 4);
    this.failures += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  private disconnect(): void {
    clearTimeout(this.lingerTimer);
    clearTimeout(this.retryTimer);
    this.lingerTimer = undefined;
    this.retryTimer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.open = false;
    socket?.removeAllListeners('close');
    socket?.terminate();
  }

  private emit(event: SocketEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }
}

function parseMessage(text: string): SocketMessage | undefined {
  try {
    const value = JSON.parse(text) as { type?: unknown; data?: unknown };
    if (typeof value.type !== 'string') return undefined;
    return { type: value.type, data: (value.data ?? {}) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}
