#!/usr/bin/env bun
/** Entry point of the `researcher` executable. */
import { main } from "./cli/cli.ts";

process.title = "researcher";
process.exitCode = await main(process.argv);
