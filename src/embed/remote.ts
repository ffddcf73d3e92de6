/**
 * Embedding servers over HTTP: Ollama (`/api/embed`) and OpenAI-compatible ones (`/v1/embeddings`). One call sends
 * a batch of texts and returns their vectors as the server gave them; every request has a timeout (hub.ts).
 */
import { describeError, ResearcherError } from "../errors.ts";
import { env } from "../env.ts";
import { fetchText } from "./hub.ts";

export type RemoteProvider = "ollama" | "openai";

/** What a call needs to know of the model choice: the model's name and where its server is. */
export interface RemoteModel {
  model: string;
  ollamaUrl?: string;
  openaiUrl?: string;
}

/** The batch call of a provider; it fails with PROVIDER_FAILED, naming the URL and what went wrong. */
export function remoteCall(provider: RemoteProvider, choice: RemoteModel): (texts: string[]) => Promise<Float32Array[]> {
  return provider === "ollama" ? ollamaCall(choice) : openaiCall(choice);
}

function ollamaCall(choice: RemoteModel): (texts: string[]) => Promise<Float32Array[]> {
  const base = (choice.ollamaUrl ?? env.ollamaHost() ?? "http://127.0.0.1:11434").replace(/\/$/, "");
  return async (texts) => {
    const body = await postJson(`${base}/api/embed`, { model: choice.model, input: texts }, {}, "ollama");
    const embeddings = (body as { embeddings?: number[][] }).embeddings;
    if (!Array.isArray(embeddings)) throw providerError("ollama", "response has no embeddings");
    return embeddings.map((e) => vectorOf(e, "ollama"));
  };
}

function openaiCall(choice: RemoteModel): (texts: string[]) => Promise<Float32Array[]> {
  // OpenAI documents its base URL with the version (`https://api.openai.com/v1`); both spellings work.
  const base = (choice.openaiUrl ?? "https://api.openai.com").replace(/\/+$/, "").replace(/\/v1$/, "");
  const key = env.openaiKey();
  if (!key) {
    throw new ResearcherError("PROVIDER_FAILED", "OPENAI_API_KEY is not set", {
      hint: "export OPENAI_API_KEY=… or use the local provider",
    });
  }
  return async (texts) => {
    const body = await postJson(
      `${base}/v1/embeddings`,
      { model: choice.model, input: texts },
      { Authorization: `Bearer ${key}` },
      "openai",
    );
    const data = (body as { data?: { index: number; embedding: number[] }[] }).data;
    if (!Array.isArray(data) || !data.every((d) => typeof d?.index === "number")) throw providerError("openai", "response has no data");
    return data.sort((a, b) => a.index - b.index).map((d) => vectorOf(d.embedding, "openai"));
  };
}

async function postJson(url: string, payload: unknown, headers: Record<string, string>, provider: string): Promise<unknown> {
  let response: Awaited<ReturnType<typeof fetchText>>;
  try {
    response = await fetchText(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(payload),
    });
  } catch (error) {
    throw providerError(provider, `${url}: ${describeError(error)}`);
  }
  if (!response.ok) throw providerError(provider, `${url} answered ${response.status}: ${response.text.slice(0, 200)}`);
  try {
    return JSON.parse(response.text);
  } catch {
    throw providerError(provider, `${url} answered something other than JSON: ${response.text.slice(0, 200)}`);
  }
}

/**
 * A vector as the server gave it: a list, or the server's failure (`null` in its place threw a TypeError, an
 * internal error). Its values are checked with the batch (checkedBatches: finite numbers, the model's dimensions).
 */
function vectorOf(value: unknown, provider: string): Float32Array {
  if (!Array.isArray(value))
    throw providerError(provider, `response holds something other than a vector: ${String(JSON.stringify(value)).slice(0, 80)}`);
  return Float32Array.from(value);
}

function providerError(provider: string, message: string): ResearcherError {
  return new ResearcherError("PROVIDER_FAILED", `${provider}: ${message}`, {
    hint: provider === "ollama" ? "is `ollama serve` running and the model pulled?" : "check the key, URL and model name",
  });
}
