// A bad pipeline is one line on stderr and a non-zero exit status, before any input is read.
// RUN: not opt-tool %s -p tensor-simplify,loop-simplfy 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not opt-tool %s --pass-pipeline='builtin.module(cse{bogus=1})' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not opt-tool %s --pass-pipeline='builtin.module(cse' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not opt-tool %s --emit=loop -p cse 2>&1 | filecheck %s --check-prefix=EMIT

// UNKNOWN: opt-tool: error: unknown pass 'loop-simplfy'; did you mean 'loop-simplify', 'uop-simplify', 'loop-split'?
// UNKNOWN-NOT: Traceback

// OPTION: opt-tool: error: pass 'cse': Provided arguments ["bogus"] not found in expected arguments [] (its options: none)

// SYNTAX:      opt-tool: error: bad pass pipeline: expected ',' or ')'
// SYNTAX-NEXT: {{^}}  builtin.module(cse{{$}}
// SYNTAX-NEXT: {{^}}                    ^{{$}}

// EMIT: error: --emit runs the default pipeline; it cannot be combined with -p/--pass-pipeline

func.func @main() {
  func.return
}
