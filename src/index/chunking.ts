/**
 * How an index's documents were read into fragments: the chunk settings and the versions of the chunkers and
 * converters that made them, recorded by each complete index run. What differs from the program and configuration
 * running now decides which documents the next run reads again, and `status` says so before that run (`index_due`):
 * after an upgrade, `get` reads a PDF with the new converter while the index still holds the old one's lines.
 */
import type { Config } from "../config.ts";
import { CODE_OUTLINE_VERSION, languageOf } from "../convert/code-languages.ts";
import { CONVERTER_VERSIONS, converterOf, fileType, formatOf, OCR_FORMATS } from "../convert/convert.ts";
import { failureSettings } from "../convert/pool.ts";
import { IDENTIFIER_VERSION } from "../identifiers.ts";
import type { Repository } from "../repos.ts";
import type { Store } from "../store/store.ts";
import { BARE_DOCUMENT_VERSION, MARKDOWN_CHUNK_VERSION } from "./chunk.ts";

/** The record (meta `chunking`); keys added over time are optional, as older indexes lack them. */
export interface ChunkingRecord {
  tokens: number;
  overlap: number;
  code_tokens?: number;
  code_outline?: number;
  bare?: number;
  headings?: number;
  identifiers?: number;
  converters?: Record<string, number>;
  ocr?: string;
  limits?: string;
}

/** How this program, with this configuration, reads the repository's documents. */
export function currentChunking(config: Config, repo: Repository): Required<ChunkingRecord> {
  const { tokens, overlap, code_tokens } = config.chunk;
  return {
    tokens,
    overlap,
    code_tokens,
    code_outline: CODE_OUTLINE_VERSION,
    bare: BARE_DOCUMENT_VERSION,
    headings: MARKDOWN_CHUNK_VERSION,
    identifiers: IDENTIFIER_VERSION,
    converters: { ...CONVERTER_VERSIONS },
    ocr: JSON.stringify(repo.ocr),
    limits: failureSettings(config, repo),
  };
}

/**
 * The recorded settings, or undefined when none are (nothing indexed yet). A damaged record says nothing of how
 * documents were chunked: its sizes read as NaN, so every document is chunked again.
 */
export function recordedChunking(store: Store): ChunkingRecord | undefined {
  if (store.meta.get("chunking") === undefined) return undefined;
  return store.meta.json<ChunkingRecord>("chunking", { derived: true }) ?? { tokens: Number.NaN, overlap: Number.NaN };
}

/** What reads otherwise now than when the index's documents were chunked; each part names the documents it affects. */
export interface ChunkingChanges {
  /** The chunk size or overlap: every document. */
  text: boolean;
  /** The code budget, outline or identifier words: code documents. */
  code: boolean;
  /** The markdown chunker: markdown documents. */
  headings: boolean;
  /** The chunker of documents without sections: documents an older one gave no fragment. */
  bare: boolean;
  /** Converters (CONVERTER_VERSIONS' keys) of a newer version: the documents of their formats. */
  converters: string[];
  /** The OCR mode, languages or traineddata: PDFs and images. */
  ocr: boolean;
  /** The time and memory limits: documents with pages OCR left out. */
  limits: boolean;
}

export function chunkingChanges(before: ChunkingRecord, now: Required<ChunkingRecord>): ChunkingChanges {
  return {
    text: before.tokens !== now.tokens || before.overlap !== now.overlap,
    // Indexes from before code had its own budget chunked code at the text budget, and from before the outline had a
    // version, with version 1. A new code budget or outline re-reads only code: a scanned book is not recognised
    // again because a budget it never used changed.
    code:
      (before.code_tokens ?? before.tokens) !== now.code_tokens ||
      (before.code_outline ?? 1) !== now.code_outline ||
      (before.identifiers ?? 1) !== now.identifiers,
    headings: (before.headings ?? 0) !== now.headings,
    bare: (before.bare ?? 0) !== now.bare,
    // None recorded: from before converters had versions.
    converters: Object.keys(now.converters).filter((name) => (before.converters?.[name] ?? 0) !== now.converters[name]),
    // Indexes from before OCR settings were recorded keep their documents as they are.
    ocr: (before.ocr ?? now.ocr) !== now.ocr,
    limits: (before.limits ?? now.limits) !== now.limits,
  };
}

/**
 * Why a document is read differently now, by its path alone (`chunk size`, `code chunker`, `markdown chunker`,
 * `pdf converter`, `html converter`, `ocr settings`), or none. Documents without fragments and pages OCR left out
 * depend on what the index holds of them (`bare`, `limits`): the indexer asks the store for those.
 */
export function readOtherwise(changes: ChunkingChanges, path: string): string[] {
  const format = formatOf(path);
  const converter = converterOf(format);
  const reasons: string[] = [];
  if (changes.text) reasons.push("chunk size");
  // A file without an extension is indexed only as a script (discovery reads its `#!` line), so it is code too.
  if (changes.code && (languageOf(path) !== null || fileType(path) === "")) reasons.push("code chunker");
  if (changes.headings && format === "md") reasons.push("markdown chunker");
  if (converter !== undefined && changes.converters.includes(converter)) reasons.push(`${converter} converter`);
  if (changes.ocr && OCR_FORMATS.has(format)) reasons.push("ocr settings");
  return reasons;
}

/**
 * What status says of a run due: how many documents the next `index` reads again, and why (readOtherwise's reasons).
 */
export interface IndexDue {
  documents: number;
  because: string[];
}

/**
 * The documents the next index run reads again because this program or its settings read them differently, or null
 * when none. Documents an earlier run could not read, and pages OCR left out, are not counted: status lists those.
 */
export function indexDue(store: Store, config: Config, repo: Repository): IndexDue | null {
  const before = recordedChunking(store);
  if (!before) return null;
  const changes = chunkingChanges(before, currentChunking(config, repo));
  if (!changes.text && !changes.code && !changes.headings && !changes.converters.length && !changes.ocr) return null;
  let documents = 0;
  const because = new Set<string>();
  for (const path of store.documents().keys()) {
    const reasons = readOtherwise(changes, path);
    if (reasons.length) documents++;
    for (const reason of reasons) because.add(reason);
  }
  return documents ? { documents, because: [...because].sort() } : null;
}
