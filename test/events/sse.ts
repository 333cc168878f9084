/** Reads Server-Sent Events from a web Response, frame by frame, as a client would. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
  /** `data` parsed as JSON (undefined when it is not). */
  json: any;
}

export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';
  #early: SseEvent[] = [];
  /** Comment lines seen so far (keep-alives). */
  comments: string[] = [];
  done = false;

  constructor(readonly response: Response) {
    if (!response.body) throw new Error(`no body (status ${response.status})`);
    this.#reader = response.body.getReader();
  }

  /** The next event (comments are collected, not returned); fails the test when the stream ends first or nothing comes within `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SseEvent> {
    const event = await this.nextOrEnd(timeoutMs);
    if (!event) throw new Error('the stream ended');
    return event;
  }

  /** The next event, or undefined once the stream ended. */
  async nextOrEnd(timeoutMs = 5000): Promise<SseEvent | undefined> {
    if (this.#early.length > 0) return this.#early.shift();
    return (await this.#read(timeoutMs)) ?? undefined;
  }

  async #read(timeoutMs: number, stopOnComment = false): Promise<SseEvent | undefined | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frameEnd = this.#buffer.indexOf('\n\n');
      if (frameEnd >= 0) {
        const frame = this.#buffer.slice(0, frameEnd);
        this.#buffer = this.#buffer.slice(frameEnd + 2);
        const event = parseFrame(frame, this.comments);
        if (event) return event;
        if (stopOnComment) return null;
        continue;
      }
      if (this.done) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms (buffer: ${JSON.stringify(this.#buffer.slice(0, 200))})`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left)));
      const read = await Promise.race([this.#reader.read(), timeout]);
      clearTimeout(timer);
      if (read === 'timeout') continue;
      if (read.done) this.done = true;
      else this.#buffer += this.#decoder.decode(read.value, { stream: true });
    }
  }

  /** Reads until a comment line `text` arrives (events read meanwhile are kept for `next`). */
  async comment(text: string, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.comments.includes(text)) {
      const event = await this.#read(Math.max(1, deadline - Date.now()), true);
      if (event === undefined) throw new Error('the stream ended');
      if (event) this.#early.push(event);
    }
  }

  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => undefined);
  }
}

function parseFrame(frame: string, comments: string[]): SseEvent | undefined {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  let any = false;
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) {
      comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    any = true;
    if (name === 'id') id = value;
    else if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
  }
  if (!any) return undefined;
  const text = data.join('\n');
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { id, event, data: text, json };
}
