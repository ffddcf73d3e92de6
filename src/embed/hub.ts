/**
 * The network, for models: fetch with a deadline, and downloading a model folder from the Hugging Face hub (or the
 * mirror `HF_ENDPOINT` names, as the hub's own clients read it). Nothing here waits forever: a server that does not
 * answer, or stops sending in the middle of a file, is an error after NETWORK_TIMEOUT_MS.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { syncFolder, tempPathFor, writeWhole } from "../atomic.ts";
import { describeError } from "../errors.ts";
import { env } from "../env.ts";

const NETWORK_TIMEOUT_MS = 20_000;

/** The hub's address: `HF_ENDPOINT` (a mirror, or a stand-in server in tests), else huggingface.co. */
export const hubEndpoint = () => (env.hubEndpoint() ?? "https://huggingface.co").replace(/\/+$/, "");

/**
 * Only http(s) leaves researcher through here: Bun's fetch reads `file:` URLs from the disk, so OLLAMA_HOST=file:///…
 * made a file an embedding server's answer. Every address comes from settings (`embedding.*_url`, OLLAMA_HOST,
 * HF_ENDPOINT); config.yaml's are checked when written, the environment's here.
 */
function httpOnly(url: string | URL | Request): void {
  const text = typeof url === "string" ? url : url instanceof URL ? url.href : url.url;
  if (!/^https?:\/\//i.test(text)) throw new Error(`${text} is no http:// or https:// address (check OLLAMA_HOST, HF_ENDPOINT)`);
}

/** fetch that gives up when no response headers arrive in time, instead of hanging a command. */
export async function fetchWithTimeout(url: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  httpOnly(url);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), NETWORK_TIMEOUT_MS);
  try {
    return await fetch(url, { ...init, signal: controller.signal });
  } catch (error) {
    throw new Error(
      controller.signal.aborted ? `no answer from ${String(url)} within ${NETWORK_TIMEOUT_MS / 1000} s` : describeError(error),
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * fetch and read the whole answer within one deadline: a server that sends its headers and then stalls (an
 * overloaded provider, a proxy) is an error too, where `fetchWithTimeout` alone stops watching at the headers.
 */
export async function fetchText(
  url: string,
  init: RequestInit = {},
  timeoutMs = NETWORK_TIMEOUT_MS,
): Promise<{ ok: boolean; status: number; text: string }> {
  httpOnly(url);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    return { ok: response.ok, status: response.status, text: await response.text() };
  } catch (error) {
    throw new Error(controller.signal.aborted ? `no complete answer from ${url} within ${timeoutMs / 1000} s` : describeError(error));
  } finally {
    clearTimeout(timer);
  }
}

export interface HubFile {
  name: string;
  /** A missing optional file (HTTP 404) is skipped; a missing required one fails the download. */
  optional?: boolean;
}

/**
 * Download `files` of hub model `id` into `folder`. They are written and flushed into a temp folder beside it, renamed
 * into place at the end, so an interrupted download never leaves a folder that looks like a complete model.
 */
export async function downloadModel(
  id: string,
  files: HubFile[],
  folder: string,
  onProgress?: (file: string, loaded: number, total: number) => void,
): Promise<void> {
  mkdirSync(dirname(folder), { recursive: true });
  const temp = tempPathFor(folder);
  mkdirSync(temp);
  try {
    for (const file of files)
      await downloadFile(`${hubEndpoint()}/${id}/resolve/main/${file.name}`, file, join(temp, file.name), onProgress);
    // Another process may have finished the same download meanwhile: its complete folder stays, ours is dropped.
    if (existsSync(join(folder, files[0]!.name))) rmSync(temp, { recursive: true, force: true });
    else {
      rmSync(folder, { recursive: true, force: true });
      syncFolder(temp); // its files' names, as their contents
      renameSync(temp, folder);
      syncFolder(dirname(folder));
    }
  } catch (error) {
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
}

async function downloadFile(
  url: string,
  file: HubFile,
  target: string,
  onProgress?: (file: string, loaded: number, total: number) => void,
): Promise<void> {
  httpOnly(url);
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), NETWORK_TIMEOUT_MS);
  const stalled = () => new Error(`${url}: no data for ${NETWORK_TIMEOUT_MS / 1000} s`);
  try {
    // Uncompressed: fetch would inflate a compressed body, whose length then no longer matches Content-Length.
    const response = await fetch(url, { signal: controller.signal, headers: { "accept-encoding": "identity" } }).catch((error) => {
      throw controller.signal.aborted ? stalled() : new Error(`${url}: ${describeError(error)}`);
    });
    if (response.status === 404 && file.optional) return;
    if (!response.ok || !response.body) throw new Error(`${url} answered ${response.status}`);
    const encoding = response.headers.get("content-encoding");
    const total = !encoding || encoding === "identity" ? Number(response.headers.get("content-length")) || 0 : 0;
    const fd = openSync(target, "w", 0o644);
    try {
      let loaded = 0;
      for await (const chunk of response.body) {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(), NETWORK_TIMEOUT_MS);
        writeWhole(fd, chunk);
        loaded += chunk.length;
        onProgress?.(file.name, loaded, total);
      }
      if (total && loaded !== total) throw new Error(`${url}: the connection closed after ${loaded} of ${total} bytes`);
      // On disk before the folder is renamed into place: after a power cut the folder could be there, named as a
      // complete model, with an empty or cut model.onnx (s26 review F6).
      fsyncSync(fd);
    } catch (error) {
      throw controller.signal.aborted ? stalled() : error;
    } finally {
      closeSync(fd);
    }
  } finally {
    clearTimeout(timer);
  }
}
