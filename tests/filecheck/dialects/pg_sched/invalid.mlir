// One case per pg_sched verifier rule (and !pg.buffer's); each diagnostic names the op's
// line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_sched.kernel' @k: argument types must be !pg.buffer, got f32
pg_sched.kernel @k(%a: f32, %out: !pg.buffer<4xf32>) {
  %c = pg_tensor.const 1.0 : tensor<4xf32>
  pg_sched.store %c, %out : tensor<4xf32>, !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_sched.kernel' @k stores nothing
pg_sched.kernel @k(%a: !pg.buffer<4xf32>) {
  %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_sched.load': tensor<2x4xf32> does not fit !pg.buffer<4xf32> (element type and element count must match)
pg_sched.kernel @k(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
  %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<2x4xf32>
  %c = pg_tensor.const 1.0 : tensor<4xf32>
  pg_sched.store %c, %out : tensor<4xf32>, !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: 'pg_sched.store': tensor<4xi32> does not fit !pg.buffer<4xf32> (element type and element count must match)
pg_sched.kernel @k(%out: !pg.buffer<4xf32>) {
  %c = pg_tensor.const 1 : tensor<4xi32>
  pg_sched.store %c, %out : tensor<4xi32>, !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_sched.load' expects parent op 'pg_sched.kernel'
func.func @outside(%a: !pg.buffer<4xf32>) {
  %x = pg_sched.load %a : !pg.buffer<4xf32> -> tensor<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'pg_sched.launch': no kernel named @missing
func.func @main(%a: !pg.buffer<4xf32>) {
  pg_sched.launch @missing(%a) : !pg.buffer<4xf32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 7]]:3: error: 'pg_sched.launch' @k: argument types ['!pg.buffer<8xf32>'] do not match the kernel's ['!pg.buffer<4xf32>']
pg_sched.kernel @k(%out: !pg.buffer<4xf32>) {
  %c = pg_tensor.const 1.0 : tensor<4xf32>
  pg_sched.store %c, %out : tensor<4xf32>, !pg.buffer<4xf32>
}
func.func @main() -> !pg.buffer<8xf32> {
  %t = pg_sched.alloc : !pg.buffer<8xf32>
  pg_sched.launch @k(%t) : !pg.buffer<8xf32>
  func.return %t : !pg.buffer<8xf32>
}

// -----
// Types verify while they are parsed: the error points at the type. (`0xf32` would lex as
// a hexadecimal number, hence the spaces.)
// CHECK: invalid.mlir:[[# @LINE + 2]]:25: error: !pg.buffer size must be positive, got 0
func.func @main() {
  %t = pg_sched.alloc : !pg.buffer<0 x f32>
  func.return
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:25: error: !pg.buffer: element type f80 is not one of f16, f32, f64, i1, i8, ui8, i16, i32, i64, ui16, ui32, ui64, bf16
func.func @main() {
  %t = pg_sched.alloc : !pg.buffer<4xf80>
  func.return
}
