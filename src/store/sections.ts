/**
 * The runs of parts a unit or section was split into (Store.sectionParts reads their rows): which fragments are
 * parts of one function, class or section, by the units the chunker recorded, else by what the fragments show.
 * Pure: no SQL here.
 */
import { FUNCTION_LABEL } from "../text.ts";

/** Between the labels of a heading path (`class Parser › def feed`), as stored with every fragment. */
export const HEADING_SEPARATOR = " › ";

/** Which of several consecutive fragments under one heading a fragment is, and the lines they span together. */
export interface SectionParts {
  part: number;
  parts: number;
  start_line: number;
  end_line: number;
}

/**
 * How far from a fragment the parts of its unit are looked for first, and at most (a unit of more parts is cited by
 * these).
 */
export const SECTION_REACH = 64;
export const MAX_SECTION_REACH = 4096;

export interface SectionRow {
  seq: number;
  start: number;
  end: number;
  page: number | null;
  heading: string;
  /** The unit it is part of (Fragment.unit); null in fragments chunked before units were recorded. */
  unit: number | null;
  /** The fragment's first characters: whether it opens a unit of its own, where no unit is recorded. */
  head: string;
}

/**
 * Where in `rows` (by seq) the run of parts holding fragment `seq` starts and ends (see Store.sectionParts), or
 * undefined when `seq` is not among them.
 */
export function runAround(rows: SectionRow[], seq: number, fragmentHeading: string, code: boolean) {
  const at = rows.findIndex((row) => row.seq === seq);
  if (at < 0) return undefined;
  // A part of a function is found by the unit it belongs to, not by its own heading: a first part that holds a nested
  // def is headed `def copystat › def _nop`, and by that heading its run was itself alone (s28 user #1).
  const unit = code ? functionUnit(rows, at) : undefined;
  const heading = unit?.heading ?? fragmentHeading;
  const own = (row: SectionRow) => row.heading === heading || (unit !== undefined && row.unit === unit.unit);
  const nested = (row: SectionRow) => row.heading.startsWith(`${heading}${HEADING_SEPARATOR}`);
  let first = at;
  let last = at;
  // Back while this fragment continues what the one before it holds, forward while the next one does.
  const joins = (i: number) => (own(rows[i]!) || nested(rows[i]!)) && rows[i]!.seq === rows[i - 1]!.seq + 1;
  while (first > 0 && joins(first) && (own(rows[first - 1]!) || nested(rows[first - 1]!))) first--;
  while (last < rows.length - 1 && joins(last + 1)) last++;
  // Split where a fragment opens a unit of its own (see Store.sectionParts): by the units the chunker recorded, else
  // by what the fragments show.
  const name = code ? unitName(heading) : undefined;
  const named = name && new RegExp(`(?<![\\p{L}\\p{N}_$])${name.replace(/\$/g, "\\$")}(?![\\p{L}\\p{N}_$])`, "u");
  const shown = (i: number) =>
    named ? named.test(firstCodeLine(rows[i]!.head)) : rows[i]!.page === rows[i - 1]!.page && rows[i]!.start > rows[i - 1]!.end + 2;
  const opens = (i: number) => {
    let before = i - 1;
    while (before >= first && !own(rows[before]!)) before--;
    const [unit, previous] = [rows[i]!.unit, before >= first ? rows[before]!.unit : null];
    return unit !== null && previous !== null ? unit !== previous : shown(i);
  };
  for (let i = first + 1; i <= at; i++) if (own(rows[i]!) && opens(i)) first = i;
  for (let i = at + 1; i <= last; i++) {
    if (own(rows[i]!) && opens(i)) {
      last = i - 1;
      break;
    }
  }
  // A text section's run starts and ends with its own fragments: a subsection at an end is no part of it. In code a
  // nested def lies inside the function around it, so a function whose head or tail is a nested def's fragment goes
  // on over it (`ast.dump`'s tail is `def dump › def _format`: its head had no section). A class's methods are units
  // of their own: its one own fragment went on over all of them ("part 25 of 37, lines 679-1704", s18 review #8).
  if (!code || !FUNCTION_LABEL.test(heading.split(HEADING_SEPARATOR).at(-1)!)) {
    while (!own(rows[first]!)) first++;
    while (!own(rows[last]!)) last--;
  }
  return { at, first, last };
}

/**
 * The function a code fragment is a part of, by its recorded unit: the symbol path its unit's fragments share, when
 * that names a function. Its fragments share the function's unit, nested defs kept whole in it too; a class's methods
 * share the class's unit but are units of their own, so a unit whose path ends in a class (or names nothing) is none.
 */
function functionUnit(rows: SectionRow[], at: number): { unit: number; heading: string } | undefined {
  const unit = rows[at]!.unit;
  if (unit === null) return undefined;
  let shared = rows[at]!.heading.split(HEADING_SEPARATOR);
  for (const row of rows) {
    if (row.unit !== unit) continue;
    const path = row.heading.split(HEADING_SEPARATOR);
    let common = 0;
    while (common < shared.length && common < path.length && shared[common] === path[common]) common++;
    shared = shared.slice(0, common);
  }
  const last = shared.at(-1);
  return last !== undefined && FUNCTION_LABEL.test(last) ? { unit, heading: shared.join(HEADING_SEPARATOR) } : undefined;
}

/**
 * The name a code heading's last unit is called by: `def feed` → `feed`, `func (T) Name` → `Name`, `parse()` → `parse`.
 */
function unitName(heading: string): string | undefined {
  return /([\p{L}\p{N}_$]+)[^\p{L}\p{N}_$]*$/u.exec(heading.split(HEADING_SEPARATOR).at(-1)!)?.[1];
}

/** A fragment's first line of code: past blank lines, comments and decorators (`@size.setter`). */
function firstCodeLine(text: string): string {
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed && !/^(?:#|\/\/|\/\*|\*|--|@|\[)/.test(trimmed)) return trimmed;
  }
  return "";
}
