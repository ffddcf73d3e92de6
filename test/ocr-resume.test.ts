/**
 * OCR resumes: each page a scan's OCR reads is kept in index.db as it is read, so an index run killed in the middle of
 * a long scan (kill -9 here: nothing of the run's own ends) costs the next run only the pages it had not read. Real
 * runs of the CLI, killed once pages of its scan are kept, and real runs after; scanOfPages' pages read in ~0.6 s.
 * And across versions of a scan: a page whose image an indexed version read is read back, not recognised again.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PageReading } from "../src/convert/document.ts";
import { type GrayImage, pixelsKey, recognise } from "../src/convert/ocr.ts";
import { indexFiles, indexRepository, type IndexProgress } from "../src/index/indexer.ts";
import type { Repository } from "../src/repos.ts";
import { Store } from "../src/store/store.ts";
import { bm25Repository, cliCommand, runCli } from "./helpers.ts";
import { encode as encodePng } from "fast-png";
import { PDFDocument, PDFName } from "pdf-lib";
import { scanOfPages } from "./pdf-fixtures.ts";

const OCR_TIMEOUT = 240_000; // a page is well under a CPU-second, but the machine is shared

const PAGES = 10;

/** The pages index.db keeps of conversions cut short (none where the index keeps none, or has no such table). */
function keptPages(repo: Repository): number[] {
  try {
    const db = new Database(Store.dbPath(repo.dir), { readonly: true });
    try {
      return db
        .query<{ page: number }, []>("SELECT page FROM ocr_readings ORDER BY page")
        .all()
        .map((row) => row.page);
    } finally {
      db.close();
    }
  } catch {
    return []; // not created yet, busy for a moment, or no such table
  }
}

/** `index` as a subprocess, killed with SIGKILL once `pages` pages of its scan are kept (or left to end); what is kept. */
async function killedAfter(home: string, repo: Repository, pages: number): Promise<number[]> {
  const env = { PATH: process.env.PATH ?? "", HOME: home, RESEARCHER_HOME: home, NO_COLOR: "1" };
  const run = Bun.spawn([...cliCommand, "index", repo.name, "--quiet"], { env, stdout: "ignore", stderr: "ignore" });
  while (run.exitCode === null && keptPages(repo).length < pages) await Bun.sleep(10);
  run.kill("SIGKILL");
  await run.exited;
  return keptPages(repo);
}

/**
 * An index run in this process (a rebuild, or of `paths` alone as a watch batch and MCP add_to_index index them): its
 * summary and the pages its OCR started on, in order.
 */
async function indexed(home: string, repo: Repository, run: { rebuild?: boolean; paths?: string[] } = {}) {
  const events: IndexProgress[] = [];
  const onProgress = (p: IndexProgress) => events.push(p);
  const summary = run.paths
    ? await indexFiles(home, repo, run.paths, { onProgress })
    : await indexRepository(home, repo, { rebuild: run.rebuild, onProgress });
  return { summary, ocr: events.flatMap((p) => (p.ocr ? [p.ocr.page] : [])) };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The document as the index holds it: its title, its converted text, and how many of its pages OCR read. */
function stored(repo: Repository) {
  const store = Store.open(repo.dir);
  try {
    return { title: store.documentByPath("scan.pdf")?.title, text: store.convertedText("scan.pdf")?.text, ocrPages: store.ocrPages() };
  } finally {
    store.close();
  }
}

test(
  "an index run killed after k pages of a scan: the next run recognises only the other pages, and the index holds what one uninterrupted run makes",
  async () => {
    const scan = await scanOfPages(PAGES);
    const { home, repo } = bm25Repository({ "scan.pdf": scan });
    const kept = await killedAfter(home, repo, 3);
    // Killed mid-scan: the pages read before the kill are kept, in order, and the file was not finished.
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(PAGES);
    expect(kept).toEqual(range(1, kept.length));

    const resumed = await indexed(home, repo);
    // Only the pages not read before are recognised; the summary counts those, status every page of the document.
    expect(resumed.ocr).toEqual(range(kept.length + 1, PAGES));
    expect(resumed.summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: PAGES - kept.length });
    expect(keptPages(repo)).toEqual([]); // the document holds its text now: no page is kept apart

    const clean = bm25Repository({ "scan.pdf": scan });
    const whole = await indexed(clean.home, clean.repo);
    expect(whole.ocr).toEqual(range(1, PAGES));
    expect(stored(repo)).toEqual(stored(clean.repo));
    expect(stored(repo)).toMatchObject({ ocrPages: PAGES, text: expect.stringContaining("hostile scan") });
  },
  OCR_TIMEOUT,
);

test(
  "pages kept of a scan are not read back for other page images at its path, and a complete run drops those of a file changed or gone",
  async () => {
    const { home, docs, repo } = bm25Repository({ "scan.pdf": await scanOfPages(PAGES), "other.pdf": await scanOfPages(PAGES + 1) });
    const kept = await killedAfter(home, repo, 2);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    // Edited to other page images: its pages are all recognised again; the pages its old bytes read are dropped.
    writeFileSync(join(docs, "scan.pdf"), await scanOfPages(4, 20));
    rmSync(join(docs, "other.pdf"));
    const changed = await indexed(home, repo);
    expect(changed.ocr).toEqual(range(1, 4));
    expect(changed.summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 4 });
    expect(keptPages(repo)).toEqual([]);

    // A scan that went before any run finished it leaves no page behind either.
    writeFileSync(join(docs, "other.pdf"), await scanOfPages(PAGES));
    rmSync(join(docs, "scan.pdf"));
    expect((await killedAfter(home, repo, 2)).length).toBeGreaterThanOrEqual(2);
    rmSync(join(docs, "other.pdf"));
    writeFileSync(join(docs, "note.md"), "# Note\n\nA folder never empty.\n");
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, removed: 1, failed: 0 });
    expect(keptPages(repo)).toEqual([]);
  },
  OCR_TIMEOUT,
);

test(
  "a scan changed after a run was killed in it (a viewer appended a save) reads back the pages kept by their images (s27 hostile O1)",
  async () => {
    const scan = await scanOfPages(PAGES);
    const { home, docs, repo } = bm25Repository({ "scan.pdf": scan });
    const kept = await killedAfter(home, repo, 2);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThan(PAGES);
    // Other bytes, the same page images: every page was recognised again.
    writeFileSync(join(docs, "scan.pdf"), Buffer.concat([scan, Buffer.from("\n% appended by a viewer\n")]));
    const resumed = await indexed(home, repo);
    expect(resumed.summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: PAGES - kept.length });
    expect(keptPages(repo)).toEqual([]);
    expect(stored(repo)).toMatchObject({ ocrPages: PAGES, text: expect.stringContaining("hostile scan") });
  },
  OCR_TIMEOUT,
);

test(
  "a watch batch or add_to_index resumes a scan as a run does, and index --rebuild reads the kept pages back and leaves none",
  async () => {
    const { home, docs, repo } = bm25Repository({ "scan.pdf": await scanOfPages(PAGES) });
    const kept = await killedAfter(home, repo, 2);
    expect(kept.length).toBeGreaterThanOrEqual(2);
    const batch = await indexed(home, repo, { paths: ["scan.pdf"] });
    expect(batch.ocr).toEqual(range(kept.length + 1, PAGES));
    expect(batch.summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: PAGES - kept.length });
    expect(keptPages(repo)).toEqual([]);

    writeFileSync(join(docs, "other.pdf"), await scanOfPages(PAGES + 1));
    const cut = await killedAfter(home, repo, 2);
    expect(cut.length).toBeGreaterThanOrEqual(2);
    const rebuilt = await indexed(home, repo, { rebuild: true });
    expect(rebuilt.ocr).toEqual(range(cut.length + 1, PAGES + 1)); // scan.pdf's kept text is read back whole
    expect(rebuilt.summary).toMatchObject({ indexed: 2, failed: 0, ocr_pages: PAGES + 1 - cut.length });
    expect(keptPages(repo)).toEqual([]);
  },
  OCR_TIMEOUT,
);

/** What index.db and its side files (WAL) hold, as text: a removed text must not be in it. */
function indexBytes(dir: string): string {
  return readdirSync(dir)
    .filter((name) => name.startsWith("index.db"))
    .map((name) => readFileSync(join(dir, name)).toString("latin1"))
    .join("");
}

test(
  "remove drops the pages kept of a conversion cut short at its path, with their bytes, as it drops the document",
  async () => {
    // Indexed as a one-page scan, edited into a longer one whose run was killed: remove leaves no text of either.
    const { home, docs, repo } = bm25Repository({ "scan.pdf": await scanOfPages(1) });
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, ocr_pages: 1 });
    writeFileSync(join(docs, "scan.pdf"), await scanOfPages(PAGES));
    expect((await killedAfter(home, repo, 2)).length).toBeGreaterThanOrEqual(2);
    expect(runCli(["remove", "docs", "scan.pdf"], { home })).toMatchObject({ code: 0, stdout: "removed docs:scan.pdf\n" });
    expect(keptPages(repo)).toEqual([]);
    expect(indexBytes(repo.dir)).not.toContain("hostile scan");

    // Never indexed (its first run killed): remove says so, and leaves none of the pages read either.
    expect((await killedAfter(home, repo, 2)).length).toBeGreaterThanOrEqual(2);
    const refused = runCli(["remove", "docs", "scan.pdf"], { home });
    expect(refused.stderr).toStartWith("error: 'scan.pdf' is not indexed in 'docs'");
    expect(keptPages(repo)).toEqual([]);
    expect(indexBytes(repo.dir)).not.toContain("hostile scan");
  },
  OCR_TIMEOUT,
);

/** How many page images' readings index.db keeps with its documents (none where it has no such table). */
function keptImages(repo: Repository): number {
  const db = new Database(Store.dbPath(repo.dir), { readonly: true });
  try {
    return db.query<{ n: number }, []>("SELECT count(*) AS n FROM ocr_images").get()!.n;
  } catch {
    return 0; // no such table
  } finally {
    db.close();
  }
}

/** Where each of the scan's fragments is cited (its pages) and what it says. */
function citations(repo: Repository) {
  const db = new Database(Store.dbPath(repo.dir), { readonly: true });
  try {
    return db.query("SELECT f.page, f.page_end, f.text FROM fragments f JOIN documents d ON d.id = f.document_id ORDER BY f.seq").all();
  } finally {
    db.close();
  }
}

/** The scan as a PDF reader saves it with a highlight on its first page (as in s26 F13's repro): its images as they were. */
async function highlighted(scan: Uint8Array): Promise<Uint8Array> {
  const pdf = await PDFDocument.load(scan);
  const highlight = pdf.context.obj({
    Type: "Annot",
    Subtype: "Highlight",
    Rect: [50, 600, 300, 620],
    QuadPoints: [50, 620, 300, 620, 50, 600, 300, 600],
    C: [1, 1, 0],
  });
  pdf.getPage(0).node.set(PDFName.of("Annots"), pdf.context.obj([pdf.context.register(highlight)]));
  return pdf.save({ useObjectStreams: false });
}

/** The scan with a speck drawn on page `n`: that page's image is another now. */
async function speckled(scan: Uint8Array, n: number): Promise<Uint8Array> {
  const pdf = await PDFDocument.load(scan);
  const speck = await pdf.embedPng(encodePng({ width: 2, height: 2, data: new Uint8Array(4), channels: 1 }));
  pdf.getPage(n - 1).drawImage(speck, { x: 590, y: 770, width: 4, height: 4 });
  return pdf.save();
}

const SCAN_PAGES = 3;

test(
  "a highlight added to an indexed scan, or bytes appended to it, has none of its pages recognised again: its text and citations are the same, and only the current version's page readings are kept (s26 F13)",
  async () => {
    const scan = await scanOfPages(SCAN_PAGES);
    const { home, docs, repo } = bm25Repository({ "scan.pdf": scan });
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: SCAN_PAGES });
    const first = { ...stored(repo), citations: citations(repo) };
    expect(first.text).toContain("hostile scan");

    const annotated = await highlighted(scan);
    writeFileSync(join(docs, "scan.pdf"), annotated);
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 0 });
    expect({ ...stored(repo), citations: citations(repo) }).toEqual(first);
    expect(keptImages(repo)).toBe(SCAN_PAGES);

    // An incremental update a reader appends, as a watch batch indexes it.
    writeFileSync(join(docs, "scan.pdf"), Buffer.concat([annotated, Buffer.from("\n% annotated\n")]));
    expect((await indexed(home, repo, { paths: ["scan.pdf"] })).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 0 });
    expect({ ...stored(repo), citations: citations(repo) }).toEqual(first);
    expect(keptImages(repo)).toBe(SCAN_PAGES); // the earlier versions' went with them
    // A rebuild reads the kept text back and keeps the page readings with it.
    expect((await indexed(home, repo, { rebuild: true })).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 0 });
    expect(keptImages(repo)).toBe(SCAN_PAGES);

    // A scan gone leaves none of its pages' readings.
    rmSync(join(docs, "scan.pdf"));
    writeFileSync(join(docs, "note.md"), "# Note\n\nA folder never empty.\n");
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, removed: 1, failed: 0 });
    expect(keptImages(repo)).toBe(0);
  },
  OCR_TIMEOUT,
);

test(
  "a scan whose page image changed has that page recognised again, and only it: the index holds what one run of the new file makes",
  async () => {
    const scan = await scanOfPages(SCAN_PAGES);
    const { home, docs, repo } = bm25Repository({ "scan.pdf": scan });
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, ocr_pages: SCAN_PAGES });
    const changed = await speckled(scan, 2);
    writeFileSync(join(docs, "scan.pdf"), changed);
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 1 });
    expect(keptImages(repo)).toBe(SCAN_PAGES);

    const clean = bm25Repository({ "scan.pdf": changed });
    expect((await indexed(clean.home, clean.repo)).summary).toMatchObject({ ocr_pages: SCAN_PAGES });
    expect({ ...stored(repo), citations: citations(repo) }).toEqual({ ...stored(clean.repo), citations: citations(clean.repo) });
  },
  OCR_TIMEOUT,
);

test(
  "a scan whose first run was killed mid-way, then resumed, has none of its pages recognised again once annotated: the pages read back keep their images",
  async () => {
    const scan = await scanOfPages(PAGES);
    const { home, docs, repo } = bm25Repository({ "scan.pdf": scan });
    const kept = await killedAfter(home, repo, 3);
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: PAGES - kept.length });
    expect(keptImages(repo)).toBe(PAGES);
    writeFileSync(join(docs, "scan.pdf"), await highlighted(scan));
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, failed: 0, ocr_pages: 0 });
  },
  OCR_TIMEOUT,
);

test(
  "remove of an annotated scan leaves none of its page images' readings, nor its text before the highlight, with their bytes: indexed again, every page is recognised",
  async () => {
    const scan = await scanOfPages(SCAN_PAGES);
    const { home, docs, repo } = bm25Repository({ "scan.pdf": scan });
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, ocr_pages: SCAN_PAGES });
    writeFileSync(join(docs, "scan.pdf"), await highlighted(scan));
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, ocr_pages: 0 });
    expect(runCli(["remove", "docs", "scan.pdf"], { home })).toMatchObject({ code: 0, stdout: "removed docs:scan.pdf\n" });
    expect(keptImages(repo)).toBe(0);
    // Nor the text of its version before the highlight, which the index kept when the highlight replaced it.
    expect(indexBytes(repo.dir)).not.toContain("hostile scan");
    expect((await indexed(home, repo)).summary).toMatchObject({ indexed: 1, ocr_pages: SCAN_PAGES });
  },
  OCR_TIMEOUT,
);

test("a page painting the pixels of a page read back is told as read back, not counted as recognised again (s27 review D5)", async () => {
  const image: GrayImage = { gray: new Uint8Array(64).fill(200), width: 8, height: 8 };
  const told: (PageReading | undefined)[] = [];
  const options = {
    ocrKnown: new Map([[1, { text: "page one", pixels: pixelsKey(image) }]]),
    onOcrPage: (phase: "start" | "end", _page: unknown, reading?: PageReading) => {
      if (phase === "end") told.push(reading);
    },
  };
  const readings = new Map<string, PageReading>();
  const found = async (start: () => void) => {
    start();
    return image;
  };
  expect((await recognise(found, options, { page: 1, pages: 2 }, readings)).text).toBe("page one");
  expect((await recognise(found, options, { page: 2, pages: 2 }, readings)).text).toBe("page one");
  expect(told).toEqual([expect.objectContaining({ text: "page one", resumed: true })]);
});
