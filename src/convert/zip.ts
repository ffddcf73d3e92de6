/** Reading the zip containers of DOCX and EPUB files, bounded against zip bombs. */
import { unzipSync } from "fflate";
import { describeError, ResearcherError } from "../errors.ts";

/** Refuse archives that claim to unpack past this: a zip bomb would exhaust memory before failing on its own. */
const MAX_UNZIPPED_BYTES = 512 * 1024 * 1024;

/**
 * The entries of a zip that `wanted` keeps, inflated; the others are only listed (their declared sizes count
 * towards the limit). Throws `FILE_UNREADABLE` naming `kind` when the bytes are not a zip or unpack too large.
 */
export function readZip(bytes: Uint8Array, wanted: (name: string) => boolean, kind: string): Record<string, Uint8Array> {
  let total = 0;
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, {
      filter: (file) => {
        total += file.originalSize;
        return total <= MAX_UNZIPPED_BYTES && wanted(file.name);
      },
    });
  } catch (error) {
    throw new ResearcherError("FILE_UNREADABLE", `not a valid ${kind} (zip) file: ${describeError(error)}`);
  }
  if (total > MAX_UNZIPPED_BYTES) {
    const megabytes = Math.round(total / 1024 / 1024);
    throw new ResearcherError("FILE_UNREADABLE", `${kind} declares ${megabytes} MB uncompressed (over the 512 MB limit)`);
  }
  return entries;
}
