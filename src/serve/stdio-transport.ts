/**
 * MCP over stdin and stdout, one JSON-RPC message a line. The SDK's StdioServerTransport gives up for good when a
 * line outgrows its 10 MiB buffer: it pauses stdin, so the server neither reads another request nor sees stdin
 * close, and never exits. Here a line over the limit is dropped as it streams in (never held whole), reported
 * through `onerror` as a `LineTooLong` (serveStdio answers it), and reading goes on.
 */
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The longest message line read, as the SDK's default buffer: ample for any request a client sends. */
export const MAX_LINE_BYTES = 10 * 2 ** 20;

export class LineTooLong extends Error {
  constructor(limit: number) {
    super(`a message line over ${limit / 2 ** 20} MiB was dropped`);
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
  /** Inside a line already over the limit: its bytes are dropped up to its newline. */
  private dropping = false;

  constructor(private readonly maxLineBytes = MAX_LINE_BYTES) {}

  async start(): Promise<void> {
    process.stdin.on("data", this.receive);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (process.stdout.write(serializeMessage(message))) resolve();
      else process.stdout.once("drain", resolve);
    });
  }

  /** Stop reading. stdin is not paused: it must still reach its end, which is when serveStdio exits. */
  async close(): Promise<void> {
    process.stdin.off("data", this.receive);
    this.parts = [];
    this.onclose?.();
  }

  private readonly receive = (chunk: Buffer): void => {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.collect(chunk.subarray(start, end));
      this.endLine();
      start = end + 1;
    }
    this.collect(chunk.subarray(start));
  };

  private collect(bytes: Buffer): void {
    if (this.dropping || bytes.length === 0) return;
    if (this.size + bytes.length > this.maxLineBytes) {
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
      this.onerror?.(new LineTooLong(this.maxLineBytes));
      return;
    }
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.onerror?.(error as Error); // bad JSON, or JSON that is not a JSON-RPC message: answered, not fatal
      return;
    }
    this.onmessage?.(message);
  }
}
