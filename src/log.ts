/**
 * Diagnostics for people, always on stderr: stdout belongs to results (and to the protocol under `serve`).
 * consola's core build with a one-line reporter: the full build costs ~20 ms of start-up in the executable.
 */
import { createConsola } from "consola/core";

export const logger = createConsola({
  level: process.env.RESEARCHER_LOG_LEVEL ? Number(process.env.RESEARCHER_LOG_LEVEL) : 3,
  reporters: [
    {
      log(entry) {
        const text = entry.args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ");
        process.stderr.write(`${entry.type === "info" || entry.type === "log" ? "" : `${entry.type}: `}${text}\n`);
      },
    },
  ],
});
