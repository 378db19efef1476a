// One case per pg_loop verifier rule; each diagnostic names the op's line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_loop.kernel': @k: arguments must be !pg.buffer, got index
pg_loop.kernel @k(%n: index) {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'pg_loop.range': empty range [4, 0)
pg_loop.kernel @k(%a: !pg.buffer<4xf32>) {
  pg_loop.range %i = 4 to 0 global {
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'pg_loop.range': the body takes exactly one index argument
pg_loop.kernel @k(%a: !pg.buffer<4xf32>) {
  "pg_loop.range"() <{start = #builtin.int<0>, end = #builtin.int<4>, kind = #pg<range loop>}> ({
  ^bb0(%i: index, %j: index):
  }) : () -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'pg_loop.range': a reduce range is written as pg_loop.reduce
pg_loop.kernel @k(%a: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 reduce {
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_loop.reduce': the body must end in pg_loop.yield of a f32
pg_loop.kernel @k(%a: !pg.buffer<4xf32>, %out: !pg.buffer<1xf32>) {
  %c0 = pg_loop.const 0
  %s = pg_loop.reduce sum %j = 0 to 4 : f32 {
    %v = pg_loop.load %a[%j] : !pg.buffer<4xf32> -> f32
    %w = pg_uop.cast %v : f32 to f64
    pg_loop.yield %w : f64
  }
  pg_loop.store %s, %out[%c0] : f32, !pg.buffer<1xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: 'pg_loop.yield' expects parent op 'pg_loop.reduce'
pg_loop.kernel @k(%a: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %v = pg_loop.load %a[%i] : !pg.buffer<4xf32> -> f32
    pg_loop.yield %v : f32
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_loop.index': 'xor' is not an index operation (add, sub, mul, div, mod, max, min)
pg_loop.kernel @k(%a: !pg.buffer<4xf32>) {
  %c1 = pg_loop.const 1
  %x = pg_loop.index xor %c1, %c1
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:10: error: 'pg_loop.load': result type i32 != buffer element type f32
pg_loop.kernel @k(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xi32>) {
  pg_loop.range %i = 0 to 4 global {
    %v = "pg_loop.load"(%a, %i) : (!pg.buffer<4xf32>, index) -> i32
    pg_loop.store %v, %out[%i] : i32, !pg.buffer<4xi32>
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 5]]:10: error: 'pg_loop.load': a mask needs an 'other' value and vice versa
pg_loop.kernel @k(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %c2 = pg_loop.const 2
    %m = pg_loop.cmp lt %i, %c2
    %v = "pg_loop.load"(%a, %i, %m) : (!pg.buffer<4xf32>, index, i1) -> f32
    pg_loop.store %v, %out[%i] : f32, !pg.buffer<4xf32>
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: 'pg_loop.store': value type f64 != buffer element type f32
pg_loop.kernel @k(%out: !pg.buffer<4xf32>) {
  pg_loop.range %i = 0 to 4 global {
    %one = pg_uop.const 1.0 : f64
    pg_loop.store %one, %out[%i] : f64, !pg.buffer<4xf32>
  }
}
