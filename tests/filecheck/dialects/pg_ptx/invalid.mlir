// One case per pg_ptx verifier rule; each diagnostic names the op's line and column.
// RUN: opt-tool %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k-0: the entry name 'k-0' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_]*)
pg_ptx.entry @"k-0"(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: arguments must be !pg.buffer, got f32
pg_ptx.entry @k(%a: f32) grid [1, 1, 1] block [1, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: grid must be 3 positive i64 values, got [1, 1]
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1] block [1, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: block must be 3 positive i64 values, got [0, 1, 1]
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [0, 1, 1] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: the body must be flat, found pg_ptx.entry
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  pg_ptx.entry @inner(%b: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  }
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: label L0 is defined twice
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  pg_ptx.label L0
  pg_ptx.label L0
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: branch to undefined label L7
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  pg_ptx.bra L7
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: shared array smem is defined twice
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %s = pg_ptx.shared smem : !pg.buffer<4xf32>
  %t = pg_ptx.shared smem : !pg.buffer<8xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.ld_param': operand must be an argument of the enclosing pg_ptx.entry
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %s = pg_uop.shared : !pg.buffer<4xf32>
  %p = pg_ptx.ld_param %s : !pg.buffer<4xf32>
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_ptx.sreg': unknown special register 'laneid' (one of tid.x, tid.y, tid.z, ntid.x, ntid.y, ntid.z, ctaid.x, ctaid.y, ctaid.z, nctaid.x, nctaid.y, nctaid.z)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %t = pg_ptx.sreg laneid
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_ptx.const': the result has type i8, not a register class (i1, f16, i32, i64, f32, f64)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = pg_ptx.const 1 : i8
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_ptx.const': value type i32 != result type i64
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %c = "pg_ptx.const"() <{value = 1 : i32}> : () -> i64
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.alu': unknown opcode 'add.f32' (see pg_ptx.ALU_OPCODES)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_ptx.const 1.0 : f32
  %y = pg_ptx.alu add.f32 %x, %x : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.alu': add.rn.f32 takes (f32, f32) -> f32, got (i32, i32) -> i32
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_ptx.const 1 : i32
  %y = pg_ptx.alu add.rn.f32 %x, %x : i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.alu': setp.lt.f32 takes (f32, f32) -> i1, got (f32, f32) -> i32
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %x = pg_ptx.const 1.0 : f32
  %p = pg_ptx.alu setp.lt.f32 %x, %x : (f32, f32) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_ptx.reg': the register has type i8, not a register class (i1, f16, i32, i64, f32, f64)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %r = pg_ptx.reg : i8
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.read': value type i32 != register type f32
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %r = pg_ptx.reg : f32
  %v = "pg_ptx.read"(%r) : (!pg_ptx.reg<f32>) -> i32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_ptx.write': value type i32 != register type f32
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %r = pg_ptx.reg : f32
  %v = pg_ptx.const 1 : i32
  "pg_ptx.write"(%r, %v) : (!pg_ptx.reg<f32>, i32) -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.ld': state space must be one of global, shared, got 'local'
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
  %v = pg_ptx.ld local.f32 [%p] : f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.ld': unknown memory type 'f16' (one of u8, s8, u16, s16, u32, s32, b32, b16, f32, u64, s64, b64, f64)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
  %v = pg_ptx.ld global.f16 [%p] : f16
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:8: error: 'pg_ptx.ld': global.u8 needs register class i32, got i64
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
  %v = pg_ptx.ld global.u8 [%p] : i64
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:8: error: 'pg_ptx.ld': a guard needs an 'other' value and vice versa
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
  %m = pg_ptx.const 1 : i1
  %v = "pg_ptx.ld"(%p, %m) <{space = "global", mem_type = "f32"}> : (i64, i1) -> f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:8: error: 'pg_ptx.ld': other has type i32, the result f32
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
  %m = pg_ptx.const 1 : i1
  %v = "pg_ptx.ld"(%p, %m) <{space = "global", mem_type = "f32", other = 0 : i32}> : (i64, i1) -> f32
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 4]]:3: error: 'pg_ptx.st': global.f32 needs register class f32, got f64
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %p = pg_ptx.ld_param %a : !pg.buffer<4xf32>
  %v = pg_ptx.const 1.0 : f64
  pg_ptx.st global.f32 [%p], %v : f64
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:8: error: 'pg_ptx.shared': the array name '9s' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_]*)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  %s = "pg_ptx.shared"() <{symbol = "9s", buffer_type = !pg.buffer<4xf32>}> : () -> i64
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'pg_ptx.label': the label '$L0' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_]*)
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  "pg_ptx.label"() <{label = "$L0"}> : () -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: 'pg_ptx.bra': only a guarded branch can be negated
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 1] {
  pg_ptx.label L0
  "pg_ptx.bra"() <{target = "L0", negate}> : () -> ()
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: block [1, 1, 65] exceeds CUDA's limits [1024, 1024, 64]
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [1, 1, 65] {
}

// -----
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: 'pg_ptx.entry': @k: block [64, 32, 1] has 2048 threads, more than CUDA's 1024
pg_ptx.entry @k(%a: !pg.buffer<4xf32>) grid [1, 1, 1] block [64, 32, 1] {
}
