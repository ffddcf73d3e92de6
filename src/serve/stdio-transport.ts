/**
 * MCP over stdin and stdout, one JSON-RPC message a line. The SDK's StdioServerTransport gives up for good when a
 * line outgrows its 10 MiB buffer: it pauses stdin, so the server neither reads another request nor sees stdin
 * close, and never exits. Here a line over the limit is dropped as it streams in (never held whole), reported
 * through `onerror` as a `LineTooLong` (serveStdio answers it), and reading goes on.
 */
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** The longest message line read, as the SDK's default buffer: ample for any request a client sends. */
const MAX_LINE_BYTES = 10 * 2 ** 20;

/**
 * MCP has no batches (2025-06-18): one message a line, as one a request over HTTP, whose answer says the same.
 */
export const NO_BATCHES = "Invalid Request: batches are not supported; send one JSON-RPC message a request";

/** JSON that is no JSON-RPC message (a batch: NO_BATCHES); `id` when it has one to answer (a client waits for it). */
export class InvalidMessage extends Error {
  constructor(
    readonly id: string | number | null,
    message = "Invalid Request",
  ) {
    super(message);
  }
}

export class LineTooLong extends Error {
  /**
   * The dropped request's id when its first or last bytes hold it (clients write `"id"` first or last), so the
   * client's pending request is answered rather than left waiting; null otherwise.
   */
  readonly id: string | number | null;

  constructor(limit: number, head = "", tail = "") {
    super(`a message line over ${limit / 2 ** 20} MiB was dropped`);
    this.id = requestId(head, tail);
  }
}

/** How many bytes of a dropped line's start and end are kept to find its id. */
const EDGE_BYTES = 256;
const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")`;
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}`);
const ID_LAST = new RegExp(String.raw`[,{]\s*${ID}\s*\}\s*$`);

function requestId(head: string, tail: string): string | number | null {
  const found = ID_FIRST.exec(head) ?? ID_LAST.exec(tail);
  if (!found) return null;
  try {
    return JSON.parse(found[1]!) as string | number;
  } catch {
    return null;
  }
}

const NEWLINE = 0x0a;

export class StdioLineTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** The current line's bytes so far. */
  private parts: Buffer[] = [];
  private size = 0;
  /** Inside a line already over the limit: its bytes are dropped up to its newline, but for its first and last. */
  private dropping = false;
  private head: Buffer = Buffer.alloc(0);
  private tail: Buffer = Buffer.alloc(0);

  /** Sends waiting for stdout to drain. */
  private waiting: (() => void)[] = [];
  /** stdout failed (EPIPE: the client closed its end): nobody reads an answer any more. */
  private gone = false;

  constructor(private readonly maxLineBytes = MAX_LINE_BYTES) {}

  async start(): Promise<void> {
    process.stdin.on("data", this.receive);
    process.stdin.once("end", this.finish);
    process.stdout.on("error", this.lost);
  }

  /**
   * Resolves once the message is written, or dropped because the client is gone: a client that died mid-call had
   * the server wait for a drain that never came, then die of the unhandled EPIPE with a stack trace.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.gone) return Promise.resolve();
    if (process.stdout.write(serializeMessage(message))) return Promise.resolve();
    return new Promise((resolve) => {
      // One listener for all the answers waiting: one each printed Node's "possible memory leak" warning past ten.
      if (this.waiting.length === 0) process.stdout.once("drain", this.drained);
      this.waiting.push(resolve);
    });
  }

  /** Stop reading. stdin is not paused: it must still reach its end, which is when serveStdio exits. */
  async close(): Promise<void> {
    process.stdin.off("data", this.receive);
    process.stdin.off("end", this.finish);
    this.parts = [];
    this.onclose?.();
  }

  private readonly drained = (): void => {
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  };

  private readonly lost = (): void => {
    this.gone = true;
    this.drained();
  };

  private readonly receive = (chunk: Buffer): void => {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.collect(chunk.subarray(start, end));
      this.endLine();
      start = end + 1;
    }
    this.collect(chunk.subarray(start));
  };

  /** The end of input ends the last line too: a final message without its newline is still answered. */
  private readonly finish = (): void => {
    if (this.size > 0 || this.dropping) this.endLine();
  };

  private collect(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.dropping) {
      this.tail = lastBytes(Buffer.concat([this.tail, bytes]));
      return;
    }
    if (this.size + bytes.length > this.maxLineBytes) {
      const line = Buffer.concat([...this.parts, bytes]);
      [this.head, this.tail] = [Buffer.from(line.subarray(0, EDGE_BYTES)), lastBytes(line)];
      this.dropping = true;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private endLine(): void {
    if (this.dropping) {
      this.dropping = false;
      this.onerror?.(new LineTooLong(this.maxLineBytes, this.head.toString("utf8"), this.tail.toString("utf8").replace(/\r$/, "")));
      return;
    }
    // toString drops nothing: a BOM a client (PowerShell, .NET) writes before its first line is no JSON.
    const line = Buffer.concat(this.parts)
      .toString("utf8")
      .replace(/^\ufeff/, "")
      .replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    if (line.trim() === "") return; // a blank line between messages is no message (and no parse error)
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      this.onerror?.(error as Error); // bad JSON: answered, not fatal
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(withoutNullParams(json));
    if (message.success) this.onmessage?.(message.data as JSONRPCMessage);
    // JSON that is no JSON-RPC message: answered, not fatal.
    else this.onerror?.(Array.isArray(json) ? new InvalidMessage(null, NO_BATCHES) : new InvalidMessage(idOf(json)));
  }
}

/**
 * `"params": null` (and `"_meta": null` in them) as absent: clients that write a nil field as null (Go structs without
 * `omitempty`) were refused as invalid, answered with id null, and waited for their own id forever. Over HTTP too.
 */
export function withoutNullParams(json: unknown): unknown {
  if (Array.isArray(json)) return json.map(withoutNullParams); // an HTTP batch
  if (!json || typeof json !== "object" || !("params" in json)) return json;
  const { params, ...rest } = json as { params: unknown };
  if (params === null) return rest;
  if (params && typeof params === "object" && (params as { _meta?: unknown })._meta === null) {
    const { _meta, ...kept } = params as { _meta: unknown };
    return { ...rest, params: kept };
  }
  return json;
}

function idOf(json: unknown): string | number | null {
  const id = json && typeof json === "object" ? (json as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** The last EDGE_BYTES of a line, copied (a view would keep the whole chunk alive). */
function lastBytes(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - EDGE_BYTES)));
}
