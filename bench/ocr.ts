/**
 * OCR benchmark on ../shared/data/corpus/scanned (each `scan-NN.pdf` with its true text `scan-NN.pdf.gt`, pages
 * separated by form feeds): our OCR (the conversion pool, one worker per core, as an index run converts) and the
 * tesseract CLI on the same pages in the same run (pages rendered by `pdftoppm -r 150 -gray`, `OMP_THREAD_LIMIT=1`,
 * one process per core): pages/s, CPU seconds per page, and the share of words that agree with the truth.
 * Usage: bun bench/ocr.ts   (needs tesseract-ocr and poppler-utils)
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { PAGE_MARKER } from "../src/convert/document.ts";
import { ConvertPool } from "../src/convert/pool.ts";
import { agreement } from "../test/agreement.ts";
import { table, writeSection } from "./report.ts";
import { requireShared, SHARED } from "./scifact.ts";

requireShared();
const DIR = join(SHARED, "data/corpus/scanned");
const cores = availableParallelism();
const files = readdirSync(DIR)
  .filter((name) => name.endsWith(".pdf"))
  .sort();
const truth = (file: string) =>
  readFileSync(join(DIR, `${file}.gt`), "utf8")
    .split(/\f+/)
    .filter((page) => page.trim());

interface Figures {
  pages: number;
  seconds: number;
  cpuSeconds: number;
  matched: number;
  ocrWords: number;
  truthWords: number;
}

function score(figures: Figures, text: string, truthText: string): void {
  const a = agreement(text, truthText);
  figures.matched += a.matched;
  figures.ocrWords += a.ocrWords;
  figures.truthWords += a.truthWords;
}

/** Ours: every file through the conversion pool, one worker per core; CPU time is this process's (all threads).
 * `ocrData`: a folder whose eng.traineddata replaces the built-in model, as a repository's `ocr_data` does. */
async function ours(ocrData?: string): Promise<Figures> {
  const figures: Figures = { pages: 0, seconds: 0, cpuSeconds: 0, matched: 0, ocrWords: 0, truthWords: 0 };
  const pool = new ConvertPool({ size: cores, timeoutMs: 600_000, ocrPageTimeoutMs: 600_000, convert: { ocrData } });
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    await Promise.all(
      files.map(async (file) => {
        const document = await pool.convert(file, readFileSync(join(DIR, file)));
        const pages = document.text.split("\n").reduce<string[]>((list, line) => {
          if (PAGE_MARKER.test(line)) list.push("");
          else list[list.length - 1] += `${line}\n`;
          return list;
        }, []);
        const truths = truth(file);
        for (const [i, page] of pages.entries()) score(figures, page, truths[i] ?? "");
        figures.pages += pages.length;
      }),
    );
  } finally {
    pool.close();
  }
  figures.seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  figures.cpuSeconds = (used.user + used.system) / 1e6;
  return figures;
}

/** The tesseract CLI on the same pages, one process per core: with its own model, or with `tessdata`'s. */
async function cli(tessdata?: string): Promise<Figures> {
  const figures: Figures = { pages: 0, seconds: 0, cpuSeconds: 0, matched: 0, ocrWords: 0, truthWords: 0 };
  const work = mkdtempSync(join(tmpdir(), "researcher-ocr-"));
  const pages: { image: string; truth: string }[] = [];
  for (const file of files) {
    const prefix = file.replace(/\.pdf$/, "");
    Bun.spawnSync(["pdftoppm", "-r", "150", "-gray", join(DIR, file), join(work, prefix)]);
    const truths = truth(file);
    const images = readdirSync(work)
      .filter((name) => name.startsWith(`${prefix}-`) && name.endsWith(".pgm"))
      .sort();
    for (const [i, image] of images.entries()) pages.push({ image: join(work, image), truth: truths[i] ?? "" });
  }
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: cores }, async () => {
      while (next < pages.length) {
        const page = pages[next++]!;
        const model = tessdata ? ["--tessdata-dir", tessdata, "-l", "eng"] : [];
        const proc = Bun.spawn(["tesseract", page.image, "-", "--dpi", "150", ...model], {
          env: { ...process.env, OMP_THREAD_LIMIT: "1" },
          stdout: "pipe",
          stderr: "ignore",
        });
        const text = await new Response(proc.stdout).text();
        await proc.exited;
        figures.cpuSeconds += Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1e6;
        score(figures, text, page.truth);
        figures.pages++;
      }
    }),
  );
  figures.seconds = (performance.now() - started) / 1000;
  rmSync(work, { recursive: true, force: true });
  return figures;
}

const version = (command: string[]) => Bun.spawnSync(command).stdout.toString().split("\n")[0]!.trim();
const row = (name: string, f: Figures) => [
  name,
  f.pages,
  (f.pages / f.seconds).toFixed(3),
  (f.cpuSeconds / f.pages).toFixed(2),
  ((2 * f.matched) / (f.ocrWords + f.truthWords)).toFixed(4),
  (f.matched / f.truthWords).toFixed(4),
];

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const loadBefore = load();
/** Our model (the npm package's eng 4.0.0_best_int, gunzipped) in a tessdata folder the CLI can read. */
function ourModelFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), "researcher-tessdata-"));
  const packed = readFileSync(join(import.meta.dir, "../node_modules/@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz"));
  writeFileSync(join(folder, "eng.traineddata"), gunzipSync(packed));
  return folder;
}

/** Debian's tessdata folder (tesseract-ocr-eng: tessdata_fast's English), which a user can name as `ocr_data`. */
const SYSTEM_TESSDATA = ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata"].find((folder) =>
  existsSync(join(folder, "eng.traineddata")),
);
if (!SYSTEM_TESSDATA) throw new Error("no system eng.traineddata: apt-get install tesseract-ocr");

const mine = await ours();
const mineSystemModel = await ours(SYSTEM_TESSDATA);
const theirs = await cli();
const sameModel = ourModelFolder();
const theirsSameModel = await cli(sameModel);
rmSync(sameModel, { recursive: true, force: true });
const tesseractVersion = version(["tesseract", "--version"]);
const rows = [
  row("researcher (tesseract.js-core 7.0.0 wasm, eng 4.0.0_best_int)", mine),
  row(`${tesseractVersion} CLI with researcher's model (eng 4.0.0_best_int)`, theirsSameModel),
  row(`researcher with the system model (\`ocr_data: ${SYSTEM_TESSDATA}\`)`, mineSystemModel),
  row(`${tesseractVersion} CLI (system eng model, Debian's tessdata_fast)`, theirs),
];
const cpuPerPage = (f: Figures) => f.cpuSeconds / f.pages;
console.log(JSON.stringify({ mine, mineSystemModel, theirs, theirsSameModel }));
writeSection(
  "ocr",
  "OCR of scanned pages",
  "bun bench/ocr.ts",
  `${files.length} scanned PDFs, ${mine.pages} pages (150 dpi grey JPEG, slightly tilted) of \`../shared/data/corpus/scanned\`, ${cores} at once
(ours: conversion pool workers; CLI: processes with \`OMP_THREAD_LIMIT=1\`, pages rendered by \`pdftoppm -r 150 -gray\`,
not counted). Agreement: 2·LCS / (OCR words + true words), lower-cased, order-aware, against the \`.gt\` text; recall: matched
/ true words. **The machine is shared** (load average ${loadBefore} before, ${load()} after): wall-clock pages/s vary run to run;
CPU s/page is the steadier comparison (ours includes pdf.js decoding the page image and each worker's engine start-up).

${table(["engine", "pages", "pages/s (wall)", "CPU s/page", "agreement", "recall"], rows)}

Ours/CLI speed (CPU), the built-in model: ${(cpuPerPage(theirs) / cpuPerPage(mine)).toFixed(2)}× against the CLI with its own model, ${(cpuPerPage(theirsSameModel) / cpuPerPage(mine)).toFixed(2)}× against the CLI
with the same model as ours (the engines compared). With the system's model in \`ocr_data\` (the CLI's own):
${(cpuPerPage(theirs) / cpuPerPage(mineSystemModel)).toFixed(2)}× against the CLI. Each worker's first page also pays for JavaScriptCore compiling the 2.9 MB wasm
and tiering it up, and ours counts every thread of the process (the pool's main thread too).`,
);
