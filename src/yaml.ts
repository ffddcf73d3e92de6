/**
 * YAML (config.yaml, front matter), loaded on first use: evaluating the library costs ~3 ms of every cold start,
 * and a search never parses YAML (it reads the validated JSON copy of the config).
 */
import type * as Yaml from "yaml";

const yaml = () => require("yaml") as typeof Yaml;

/** Throws the library's errors, which carry `linePos`. */
export const parseYaml = (text: string, options?: Yaml.ParseOptions & Yaml.DocumentOptions): unknown => yaml().parse(text, options);

export const stringifyYaml = (value: unknown): string => yaml().stringify(value);
