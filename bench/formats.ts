/**
 * Document formats benchmark: the shared corpus (PDF, DOCX, EPUB, HTML, markdown) indexed by the compiled
 * executable per format and all in one run (files/s, pages/s, MB/s, failures by reason, peak RSS); PDF conversion
 * side by side with poppler's pdftotext (speed and text agreement); and SciFact rendered as PDFs, one abstract per
 * page, scored against the same text as markdown. Usage: bun bench/formats.ts   (needs poppler-utils for pdftotext)
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { PDFDocument, StandardFonts, type PDFFont } from "pdf-lib";
import { buildExecutable } from "../build.ts";
import { ConvertPool } from "../src/convert/pool.ts";
import { indexRepository } from "../src/index/indexer.ts";
import { registerRepository } from "../src/repos.ts";
import { search, SearchContext } from "../src/search/search.ts";
import { table, writeSection } from "./report.ts";
import { mean, ndcg, readQrels, readQueries, requireShared, SCIFACT, SHARED } from "./scifact.ts";

requireShared();
const CORPUS = join(SHARED, "data/corpus");
const root = mkdtempSync(join(tmpdir(), "researcher-formats-"));
const home = join(root, "home");
const exe = await buildExecutable({ outfile: join(root, "bin", "researcher") });

/** Run the executable; `--json` output is parsed. */
function cli(args: string[]): { json: unknown; rssMb: number; seconds: number; code: number } {
  const started = performance.now();
  const proc = Bun.spawnSync(["timeout", "1800", "/usr/bin/time", "-f", "%M", exe, ...args], {
    env: { PATH: "/usr/bin:/bin", RESEARCHER_HOME: home },
  });
  const rssKb = Number(proc.stderr.toString().trim().split("\n").at(-1));
  const stdout = proc.stdout.toString();
  return {
    json: args.includes("--json") ? JSON.parse(stdout) : null,
    rssMb: rssKb / 1024,
    seconds: (performance.now() - started) / 1000,
    code: proc.exitCode ?? -1,
  };
}

/** Reasons without their file-specific details, so failures group: "not a readable PDF: Invalid Root reference". */
function reasonKind(reason: string): string {
  return reason
    .replace(/\(\d+ > \d+ bytes\)/, "")
    .replace(/: .*$/, "")
    .trim();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

// ---- the shared corpus through the executable ------------------------------------------------------------
const FOLDERS = ["pdf", "scanned", "docx", "epub", "html", "markdown"];
const corpusRows: (string | number)[][] = [];
const failureRows: (string | number)[][] = [];
for (const folder of [...FOLDERS, "all"]) {
  const path = folder === "all" ? CORPUS : join(CORPUS, folder);
  const name = `corpus-${folder}`;
  cli(["repo", "add", name, path, "--no-embed"]);
  const run = cli(["index", name, "--json"]);
  const summary = run.json as { seconds: number; indexed: number; failed: number; failures: { reason: string }[] };
  const db = new Database(join(home, "repositories", name, "index.db"), { readonly: true });
  const pages = db
    .query<{ n: number }, []>("SELECT coalesce(sum(json_extract(metadata, '$.pages')), 0) AS n FROM documents WHERE format = 'pdf'")
    .get()!.n;
  db.close();
  const candidates = filesUnder(path).filter((f) => /\.(md|markdown|mdx|txt|pdf|docx|html|htm|xhtml|epub)$/i.test(f));
  const bytes = candidates.reduce((sum, f) => sum + statSync(f).size, 0);
  const seconds = summary.seconds;
  corpusRows.push([
    folder,
    run.code,
    candidates.length,
    summary.indexed,
    summary.failed,
    seconds.toFixed(2),
    (candidates.length / seconds).toFixed(1),
    pages ? `${pages} (${(pages / seconds).toFixed(0)}/s)` : "–",
    (bytes / 2 ** 20 / seconds).toFixed(2),
    run.rssMb.toFixed(0),
  ]);
  if (folder !== "all") {
    const byReason = new Map<string, number>();
    for (const f of summary.failures) byReason.set(reasonKind(f.reason), (byReason.get(reasonKind(f.reason)) ?? 0) + 1);
    for (const [reason, n] of [...byReason].sort((a, b) => b[1] - a[1])) failureRows.push([folder, reason, n]);
  }
  console.log(
    `${folder}: ${summary.indexed} indexed, ${summary.failed} failed, ${seconds} s, exit ${run.code}, ${run.rssMb.toFixed(0)} MB`,
  );
}

// ---- PDF: ours (worker pool) beside poppler's pdftotext ----------------------------------------------------
const pdfs = filesUnder(join(CORPUS, "pdf")).filter((f) => f.endsWith(".pdf"));
const ours = new Map<string, string[]>();
/**
 * Convert `files` through a fresh pool (text layers only, as pdftotext reads them: OCR of pages without one is the
 * OCR benchmark's, bench/ocr.ts); those that convert land in `ours` (failures are counted in the corpus table).
 */
async function convertAll(files: string[]): Promise<void> {
  const pool = new ConvertPool({ timeoutMs: 60_000, convert: { ocr: "off" } });
  await Promise.all(
    files.map(async (file) => {
      try {
        const doc = await pool.convert(file, readFileSync(file));
        ours.set(file, doc.text.split(/^<!-- page \d+ -->$/m).slice(1));
      } catch {}
    }),
  );
  pool.close();
}
// Both sides are timed on the same files, those that convert: a PDF without a text layer first has its page images
// looked for (which OCR would read), and pdftotext is never asked for it.
await convertAll(pdfs);
const converted = [...ours.keys()];
let started = performance.now();
await convertAll(converted);
const oursSeconds = (performance.now() - started) / 1000;
const pageCount = converted.reduce((sum, f) => sum + ours.get(f)!.length, 0);
started = performance.now();
const poppler = new Map<string, string[]>();
for (const file of converted) {
  const proc = Bun.spawnSync(["pdftotext", "-q", "-enc", "UTF-8", file, "-"]);
  poppler.set(file, proc.stdout.toString().split("\f"));
}
const popplerSeconds = (performance.now() - started) / 1000;
const words = (text: string) =>
  text
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];
const agreements: number[] = [];
for (const file of converted) {
  const theirs = poppler.get(file)!;
  ours.get(file)!.forEach((page, i) => {
    const reference = words(theirs[i] ?? "");
    if (reference.length < 20) return; // too little text on the page to say anything
    const mine = new Set(words(page));
    agreements.push(reference.filter((w) => mine.has(w)).length / reference.length);
  });
}
agreements.sort((a, b) => a - b);
const median = agreements[Math.floor(agreements.length / 2)] ?? 0;
const popplerVersion = Bun.spawnSync(["pdftotext", "-v"]).stderr.toString().split("\n")[0];

// ---- SciFact as PDFs, one abstract per page ------------------------------------------------------------------
interface Abstract {
  _id: string;
  title: string;
  text: string;
}
const abstracts = readFileSync(join(SCIFACT, "corpus.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Abstract);
const PER_FILE = 20;
const pdfDir = join(root, "scifact-pdf");
const mdDir = join(root, "scifact-md");
mkdirSync(pdfDir);
mkdirSync(mdDir);
const pageOf = new Map<string, string>(); // "file.pdf#page" → abstract id
const template = await PDFDocument.create();
const font = await template.embedFont(StandardFonts.TimesRoman);
const encodable = new Set(font.getCharacterSet());
/** The standard PDF fonts encode WinAnsi only: both versions get the same text, so the comparison is fair. */
const winAnsi = (text: string) => [...text.normalize("NFKC")].map((c) => (encodable.has(c.codePointAt(0)!) ? c : " ")).join("");
for (let start = 0; start < abstracts.length; start += PER_FILE) {
  const pdf = await PDFDocument.create();
  const body = await pdf.embedFont(StandardFonts.TimesRoman);
  const name = `abstracts-${String(start / PER_FILE).padStart(3, "0")}.pdf`;
  pdf.setTitle(`SciFact abstracts ${start + 1}–${Math.min(start + PER_FILE, abstracts.length)}`);
  abstracts.slice(start, start + PER_FILE).forEach((a, i) => {
    renderAbstract(pdf, body, winAnsi(a.title), winAnsi(a.text));
    pageOf.set(`${name}#${i + 1}`, a._id);
    writeFileSync(join(mdDir, `${a._id}.md`), `# ${winAnsi(a.title)}\n\n${winAnsi(a.text)}\n`);
  });
  writeFileSync(join(pdfDir, name), await pdf.save());
}

function renderAbstract(pdf: PDFDocument, body: PDFFont, title: string, text: string): void {
  const page = pdf.addPage([612, 792]);
  // The largest size at which the abstract fits on its page.
  for (const size of [11, 10, 9, 8, 7, 6, 5]) {
    const lines = wrap(text, body, size, 468);
    const titleLines = wrap(title, body, size + 4, 468);
    if (72 + titleLines.length * (size + 4) * 1.3 + lines.length * size * 1.3 > 740) continue;
    let y = 792 - 72;
    for (const line of titleLines) {
      y -= (size + 4) * 1.3;
      page.drawText(line, { x: 72, y, size: size + 4, font: body });
    }
    y -= size;
    for (const line of lines) {
      y -= size * 1.3;
      page.drawText(line, { x: 72, y, size, font: body });
    }
    return;
  }
  throw new Error(`abstract does not fit on a page: ${title}`);
}

function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line ? `${line} ${word}` : word;
    if (line && font.widthOfTextAtSize(candidate, size) > width) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line) lines.push(line);
  return lines;
}

const pdfRepo = registerRepository(home, { name: "scifact-pdf", path: pdfDir, embed: false });
const mdRepo = registerRepository(home, { name: "scifact-md", path: mdDir, embed: false });
const pdfIndex = await indexRepository(home, pdfRepo);
await indexRepository(home, mdRepo);
const queries = readQueries("test");
const qrels = readQrels("test");
const context = new SearchContext();
const scores = { md: [] as number[], pdf: [] as number[] };
let hits = 0;
let misplaced = 0;
const abstractById = new Map(abstracts.map((a) => [a._id, a]));
// Letters and digits only: the converter rejoins words hyphenated at line ends and normalises spacing.
const squash = (text: string) => text.replace(/[^\p{L}\p{N}]+/gu, "");
for (const q of queries) {
  const md = await search(home, { query: q.text, repositories: ["scifact-md"], limit: 100, documents: true }, context);
  scores.md.push(
    ndcg(
      md.results.map((r) => basename(r.path, ".md")),
      qrels.get(q.id)!,
    ),
  );
  const pdf = await search(home, { query: q.text, repositories: ["scifact-pdf"], limit: 100 }, context);
  const ranked: string[] = [];
  for (const r of pdf.results) {
    if (!("fragment" in r)) continue;
    const id = pageOf.get(`${r.path}#${r.page}`);
    hits++;
    // Every hit's page is its abstract's page: the fragment's text is on that page (its title or its body: a snippet
    // may run from one into the other) and it does not span pages.
    const abstract = id ? abstractById.get(id) : undefined;
    const onPage =
      abstract &&
      squash(winAnsi(`${abstract.title} ${abstract.text}`)).includes(
        squash(r.fragment.page === r.fragment.page_end ? r.snippet.replace(/^…|…$/g, "") : "\u0000"),
      );
    if (!onPage) misplaced++;
    if (id && !ranked.includes(id)) ranked.push(id);
  }
  scores.pdf.push(ndcg(ranked, qrels.get(q.id)!));
}
await context.close();
const mdScore = mean(scores.md);
const pdfScore = mean(scores.pdf);

writeSection(
  "formats",
  "Document formats: the shared corpus, PDF beside pdftotext, SciFact as PDFs",
  "bun bench/formats.ts",
  `### The shared corpus through the executable (default file types, BM25 only)
Each row is one \`researcher index --json\` run of a fresh repository over that folder of \`../shared/data/corpus\`;
\`all\` is the whole corpus in one run. Exit 0 means the run finished (files that fail are recorded and skipped).
Peak RSS is the executable's maximum resident set (\`/usr/bin/time\`).

${table(["folder", "exit", "files", "indexed", "failed", "seconds", "files/s", "PDF pages (pages/s)", "MB/s", "peak RSS MB"], corpusRows)}

Failures by reason:

${table(["folder", "reason", "files"], failureRows)}

### PDF conversion beside poppler
The ${converted.length} corpus PDFs that convert (${pageCount} pages): ours through the conversion worker pool (one worker per
core) in ${oursSeconds.toFixed(2)} s; poppler's \`pdftotext\` (${popplerVersion}), one process per file, in ${popplerSeconds.toFixed(2)} s.

${table(
  ["", "pages/s", "ratio to pdftotext", "text agreement (median share of pdftotext's words per page found in ours)", "pages compared"],
  [
    [
      "researcher (pdf.js)",
      (pageCount / oursSeconds).toFixed(0),
      (pageCount / oursSeconds / (pageCount / popplerSeconds)).toFixed(2),
      median.toFixed(3),
      agreements.length,
    ],
  ],
)}

Pages with fewer than 20 words in pdftotext's output are not compared. The 10th percentile of agreement is
${(agreements[Math.floor(agreements.length / 10)] ?? 0).toFixed(3)}.

### SciFact as PDFs
The ${abstracts.length} abstracts rendered by pdf-lib into ${Math.ceil(abstracts.length / PER_FILE)} PDFs of ${PER_FILE} pages, one abstract per page
(title 4 points larger than the body; Times, WinAnsi — characters outside it become spaces, in both versions), indexed
in ${pdfIndex.seconds} s; nDCG@10 on the ${queries.length} test queries, BM25, beside the same text as one markdown file per abstract.
A PDF hit counts for the abstract on its page.

${table(
  ["version", "nDCG@10", "difference"],
  [
    ["markdown (one file per abstract)", mdScore.toFixed(4), ""],
    ["PDF (20 abstracts per file, one per page)", pdfScore.toFixed(4), (pdfScore - mdScore).toFixed(4)],
  ],
)}

Hits checked: ${hits}; hits whose snippet is not on the abstract's page (title or body) or whose fragment spans pages: ${misplaced}.`,
);
console.log(`scifact: md ${mdScore.toFixed(4)} pdf ${pdfScore.toFixed(4)}; hits ${hits}, misplaced ${misplaced}`);
console.log(`pdf: ours ${oursSeconds.toFixed(2)} s, pdftotext ${popplerSeconds.toFixed(2)} s, agreement median ${median.toFixed(3)}`);
