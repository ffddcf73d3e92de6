/**
 * Source code → fragments. The syntax work (the tree-sitter parse and the walk that cuts the file into sections of
 * whole lines with their symbol paths) is conversion, done in a conversion worker (convert/code-outline.ts); here
 * each section becomes a fragment of the file's own lines, as a PDF's pages become the text chunker's page bounds.
 */
import type { CodeSection } from "../convert/document.ts";
import type { Fragment } from "../store/store.ts";

/** One fragment per section: its lines of `source`, its line range and its symbol path. */
export function codeFragments(source: string, sections: CodeSection[]): Fragment[] {
  const lines = source.split(/\r?\n/);
  return sections.map((section, seq) => ({
    seq,
    text: lines.slice(section.startLine - 1, section.endLine).join("\n"),
    startLine: section.startLine,
    endLine: section.endLine,
    headings: section.headings,
    page: null,
    pageEnd: null,
    ...(section.unit === undefined ? {} : { unit: section.unit }),
    ...(section.defines?.length ? { defines: section.defines } : {}),
  }));
}
