/**
 * A model folder baked into the executable by `bun build.ts --embed-model <folder>` (this file is replaced at
 * build time). From source, and in a build without that flag, there is none.
 */
import type { EmbeddedFile } from "./native.ts";

export const EMBEDDED_MODEL: { name: string; files: EmbeddedFile[] } | null = null;
