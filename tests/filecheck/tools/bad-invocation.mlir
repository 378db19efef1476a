// Command lines the opt-tool fuzzer (issue 11) broke the tool with: each is one diagnostic
// on stderr and a non-zero exit, not a traceback (nor, for -t, an empty program and 0).
// RUN: not opt-tool %s -t c 2>&1 | filecheck %s --check-prefix=STAGE
// RUN: not opt-tool %s -o %t.missing/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not opt-tool %s -p 'convert-tensor-to-sched{max-buffers=1}' 2>&1 | filecheck %s --check-prefix=BUFFERS
// RUN: not opt-tool %s -p 'convert-tensor-to-sched,convert-sched-to-loop,loop-optimize{vector-bytes=2}' 2>&1 | filecheck %s --check-prefix=VECTOR
// RUN: not opt-tool %s -p 'loop-upcast{rows=0}' 2>&1 | filecheck %s --check-prefix=ROWS

// STAGE: bad-invocation.mlir:[[# @LINE + 14]]:8: error: cannot print as 'c': the c printer prints pg_c.func ops, and this module holds 'pg_tensor.unary': lower it to the c target first
// STAGE-NOT: Traceback

// OUTPUT: opt-tool: error: cannot write the output file: [Errno 2] No such file or directory: '{{.*}}.missing/out.mlir'

// BUFFERS: error: pass 'convert-tensor-to-sched' failed: convert-tensor-to-sched: max-buffers=1: a kernel needs up to 3 buffers (0: no limit)

// VECTOR: error: pass 'loop-optimize' failed: loop-optimize: vector-bytes must be at least 4, registers positive, cache-bytes not negative

// ROWS: error: pass 'loop-upcast' failed: loop-upcast: rows and cols must be at least 1

// CHECK-NOT: internal error

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = pg_tensor.unary exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
