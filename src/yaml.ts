/**
 * YAML (config.yaml, front matter), loaded on first use: evaluating the library costs ~3 ms of every cold start,
 * and a search never parses YAML (it reads the validated JSON copy of the config).
 */
import type * as Yaml from "yaml";
import { describeError } from "./errors.ts";

const yaml = () => require("yaml") as typeof Yaml;

/**
 * Throws the library's errors, which carry `linePos`. Its warnings (an unknown `!!tag`) are not printed: the library
 * would print them through process.emitWarning, the offending line copied raw to the terminal (escape sequences
 * a document holds included); the value is read as plain YAML all the same.
 */
export const parseYaml = (
  text: string,
  options?: Yaml.ParseOptions & Yaml.DocumentOptions & Yaml.SchemaOptions & Yaml.ToJSOptions,
): unknown => yaml().parse(text, { logLevel: "error", ...options });

/**
 * Why parseYaml refused a text: the line (1-based, in the text parsed) and the parser's reason without the excerpt it
 * draws (a file refused for its aliases, a "billion laughs", read as a syntax error to look for: s19 hostile #7).
 */
export function yamlError(error: unknown): { line: number | undefined; reason: string } {
  const line = (error as { linePos?: { line: number }[] }).linePos?.[0]?.line;
  return { line, reason: describeError(error).replace(/ at line \d+, column \d+:?$/, "") };
}

export const stringifyYaml = (value: unknown): string => yaml().stringify(value);
