/** docs/benchmarks.md: each benchmark owns one marked section and rewrites only that. */
import { existsSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../src/atomic.ts";
import { commit, VERSION } from "../src/version.ts";

const FILE = resolve(import.meta.dir, "../docs/benchmarks.md");
const HEADER = "# Benchmarks\n\nWritten by the scripts in `bench/`; each section says how to reproduce it.\n";

export function machine(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  const date = new Date().toISOString().slice(0, 10);
  return `${date} · researcher ${VERSION} (${commit()}) · Bun ${Bun.version} · ${process.platform}-${process.arch} · ${cpus().length} × ${cpu} · ${Math.round(totalmem() / 2 ** 30)} GiB RAM`;
}

export function writeSection(name: string, title: string, command: string, body: string): void {
  const section = `<!-- bench:${name} -->\n## ${title}\n\n\`${command}\` — ${machine()}\n\n${body.trim()}\n<!-- /bench:${name} -->`;
  let text = existsSync(FILE) ? readFileSync(FILE, "utf8") : HEADER;
  const pattern = new RegExp(`<!-- bench:${name} -->[\\s\\S]*?<!-- /bench:${name} -->`);
  text = pattern.test(text) ? text.replace(pattern, section) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileAtomic(FILE, text);
  console.log(`wrote ${join("docs", "benchmarks.md")} § ${title}`);
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
