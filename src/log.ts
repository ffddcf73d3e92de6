/** Diagnostics for people, always on stderr: stdout belongs to results (and to the protocol under `serve`). */
import { createConsola } from "consola";

export const logger = createConsola({
  level: process.env.RESEARCHER_LOG_LEVEL ? Number(process.env.RESEARCHER_LOG_LEVEL) : 3,
  stdout: process.stderr,
  stderr: process.stderr,
});
