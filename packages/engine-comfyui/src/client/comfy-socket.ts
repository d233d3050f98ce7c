import WebSocket from 'ws';

/**
 * The server's `/ws?clientId=…` socket, shared by the prompts this client follows. It is open
 * while someone listens: it connects on the first listener, reconnects with backoff when it drops,
 * and closes a short while after the last listener leaves (so a backlog of prompts reuses it).
 * Progress comes from the text messages; binary frames carry the sampler's previews (a server
 * started with `--preview-method`), each told with the prompt it shows.
 */

export interface SocketMessage {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A preview frame: the picture a prompt's sampler holds at a step. */
export interface SocketPreview {
  /** The prompt it shows: named by the frame (metadata), else the prompt running when it came. */
  readonly promptId: string | undefined;
  readonly data: Buffer;
  readonly contentType: 'image/jpeg' | 'image/png';
}

export type SocketEvent =
  | { readonly kind: 'message'; readonly message: SocketMessage }
  | { readonly kind: 'preview'; readonly preview: SocketPreview }
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
  /** The prompt the server runs now, as its messages say: what a frame without metadata shows. */
  private running: string | undefined;

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
      // What ComfyUI's own frontend says first: previews then come with the prompt they show
      // (event 4). A server that predates the flag ignores it and sends plain frames (event 1).
      socket.send(JSON.stringify({ type: 'feature_flags', data: { supports_preview_metadata: true } }));
      this.open = true;
      this.failures = 0;
      this.running = undefined;
      this.emit({ kind: 'open' });
    });
    socket.on('message', (raw, isBinary) => {
      if (isBinary) {
        const preview = parsePreview(toBuffer(raw), this.running);
        if (preview) this.emit({ kind: 'preview', preview });
        return;
      }
      const message = parseMessage(raw.toString());
      if (!message) return;
      this.follow(message);
      this.emit({ kind: 'message', message });
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

  /** Which prompt runs: from its start (and each node it runs) to its end. */
  private follow({ type, data }: SocketMessage): void {
    const promptId = typeof data.prompt_id === 'string' ? data.prompt_id : undefined;
    if (type === 'execution_start' || (type === 'executing' && data.node != null)) this.running = promptId;
    else if (
      (type === 'executing' && data.node == null) ||
      type === 'execution_success' ||
      type === 'execution_error' ||
      type === 'execution_interrupted'
    ) {
      if (promptId === this.running) this.running = undefined;
    }
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

/** Binary frame event types (ComfyUI's `BinaryEventTypes`). */
const PREVIEW_IMAGE = 1;
const PREVIEW_IMAGE_WITH_METADATA = 4;
/** Event 1's image formats. */
const FORMATS: Readonly<Record<number, SocketPreview['contentType']>> = { 1: 'image/jpeg', 2: 'image/png' };

function toBuffer(raw: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  return Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
}

/**
 * A preview frame: a 4-byte big-endian event type, then for event 1 a 4-byte format and the image,
 * for event 4 a 4-byte length, that many bytes of JSON metadata (`prompt_id`, `image_type`) and the
 * image. Anything else (another event, a frame cut short, an image type not JPEG or PNG) is none.
 */
export function parsePreview(frame: Buffer, running: string | undefined): SocketPreview | undefined {
  if (frame.length < 8) return undefined;
  const event = frame.readUInt32BE(0);
  if (event === PREVIEW_IMAGE) {
    const contentType = FORMATS[frame.readUInt32BE(4)];
    const data = frame.subarray(8);
    return contentType && data.length > 0 ? { promptId: running, data, contentType } : undefined;
  }
  if (event !== PREVIEW_IMAGE_WITH_METADATA) return undefined;
  const length = frame.readUInt32BE(4);
  if (8 + length >= frame.length) return undefined;
  let metadata: { prompt_id?: unknown; image_type?: unknown };
  try {
    metadata = JSON.parse(frame.subarray(8, 8 + length).toString('utf8')) as typeof metadata;
  } catch {
    return undefined;
  }
  const contentType = metadata.image_type;
  if (contentType !== 'image/jpeg' && contentType !== 'image/png') return undefined;
  const promptId = typeof metadata.prompt_id === 'string' ? metadata.prompt_id : running;
  return { promptId, data: frame.subarray(8 + length), contentType };
}
