/**
 * Diagnostics for people, always on stderr: stdout belongs to results (and to the protocol under `serve`).
 * consola's core build with a one-line reporter, created on the first message: constructing it costs more
 * start-up time than a whole BM25 search, and most commands never log.
 */
import { createConsola, type ConsolaInstance } from "consola/core";
import { escapeControls, stderr } from "./terminal.ts";
import { env } from "./env.ts";

let instance: ConsolaInstance | undefined;

/** How each kind of entry begins: as the CLI's own lines do (`warning:`, not consola's `warn:`), info bare. */
const LABELS: Record<string, string> = { info: "", log: "", warn: "warning: " };

function consola(): ConsolaInstance {
  instance ??= createConsola({
    level: Number(env.logLevel() ?? 3),
    reporters: [
      {
        log(entry) {
          // One line an entry, whatever a path or a message in it holds (a file name may carry escape sequences).
          const text = escapeControls(entry.args.map((a) => (a instanceof Error ? a.message : String(a))).join(" "));
          stderr.write(`${LABELS[entry.type] ?? `${entry.type}: `}${text}\n`);
        },
      },
    ],
  });
  return instance;
}

export const logger = {
  info: (message: unknown, ...args: unknown[]) => consola().info(message, ...args),
  warn: (message: unknown, ...args: unknown[]) => consola().warn(message, ...args),
  error: (message: unknown, ...args: unknown[]) => consola().error(message, ...args),
  debug: (message: unknown, ...args: unknown[]) => consola().debug(message, ...args),
};
