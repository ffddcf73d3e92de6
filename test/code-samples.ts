export const S: Record<string, string> = {
  typescript: `import { a } from "./a";
import b from "b";

/** Parses headers. */
export class Parser {
  private buf = "";

  /** Feed a chunk. */
  feed(chunk: string): void {
    this.buf += chunk;
  }

  @memo
  get size(): number {
    return this.buf.length;
  }
}

export const parseHeader = (line: string) => line.split(":");

export interface Options { strict: boolean }
`,
  go: `package main

import "fmt"

// Server serves.
type Server struct {
	name string
}

// Start starts the server.
func (s *Server) Start() error {
	fmt.Println(s.name)
	return nil
}

func main() {
	s := &Server{name: "x"}
	s.Start()
}
`,
  rust: `use std::fmt;

/// A point.
#[derive(Debug)]
struct Point { x: i32, y: i32 }

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

fn main() {
    println!("{}", Point { x: 1, y: 2 });
}
`,
  java: `package demo;

import java.util.List;

/** A stack. */
public class Stack<T> {
    private final List<T> items;

    /** Push an item. */
    @Override
    public void push(T item) {
        items.add(item);
    }

    public Stack(List<T> items) { this.items = items; }
}
`,
  c: `#include <stdio.h>

/* Add two numbers. */
static int add(int a, int b) {
    return a + b;
}

struct point { int x; int y; };

int main(void) {
    printf("%d\\n", add(1, 2));
    return 0;
}
`,
  cpp: `#include <vector>

namespace geo {
// A shape.
class Shape {
public:
    virtual double area() const = 0;
};

double Circle::area() const {
    return 3.14 * r * r;
}
}
`,
  c_sharp: `using System;

namespace Demo {
    /// <summary>Greets.</summary>
    public class Greeter {
        public string Name { get; set; }

        [Obsolete]
        public void Greet() {
            Console.WriteLine(Name);
        }
    }
}
`,
  ruby: `require "json"

# A greeter.
class Greeter
  def initialize(name)
    @name = name
  end

  def self.build
    new("x")
  end
end

module Util
  def helper; end
end
`,
  php: `<?php
namespace App;

use Foo\\Bar;

/** A greeter. */
class Greeter {
    public function greet(string $name): string {
        return "Hello " . $name;
    }
}

function helper() {
    return 1;
}
`,
  bash: `#!/bin/bash
set -e

# Print usage.
usage() {
  echo "usage: x"
}

function main {
  usage
}

main "$@"
`,
  javascript: `const fs = require("fs");

/** Read a file. */
function readIt(path) {
  return fs.readFileSync(path, "utf8");
}

class Cache {
  get(key) { return this.map[key]; }
}

module.exports = { readIt, Cache };
`,
  python: `import os
from typing import List

# module constant
LIMIT = 10


@dataclass
class Parser:
    """Parses things."""

    def feed(self, data):
        """Feed data."""
        self.buf += data

    async def close(self):
        pass


def parse_header(line):
    return line.split(":")
`,
};
