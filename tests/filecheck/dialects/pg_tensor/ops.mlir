// Every pg_tensor op: the custom form prints as written (normalized), survives
// custom -> generic -> custom, and the generic form survives generic -> generic.
// RUN: opt-tool %s | %roundtrip | filecheck %s
// RUN: opt-tool %s --print-op-generic | opt-tool --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @elementwise(
// CHECK-NEXT:  %c = pg_tensor.const 1.5 : tensor<4x8xf32>
// CHECK-NEXT:  %inf = pg_tensor.const -inf : tensor<4x8xf32>
// CHECK-NEXT:  %nan = pg_tensor.const nan : tensor<4x8xf32>
// CHECK-NEXT:  %big = pg_tensor.const 1.0e+30 : tensor<4x8xf64>
// CHECK-NEXT:  %mz = pg_tensor.const -0.0 : tensor<4x8xf32>
// CHECK-NEXT:  %ci = pg_tensor.const -7 : tensor<4x8xi32>
// CHECK-NEXT:  %f0 = pg_tensor.const 0 : tensor<4x8xi1>
// CHECK-NEXT:  %e = pg_tensor.unary exp %x : tensor<4x8xf32>
// CHECK-NEXT:  %n = pg_tensor.unary not %i : tensor<4x8xi32>
// CHECK-NEXT:  %a = pg_tensor.binary add %x, %c : tensor<4x8xf32>
// CHECK-NEXT:  %m = pg_tensor.binary mod %i, %ci : tensor<4x8xi32>
// CHECK-NEXT:  %o = pg_tensor.binary or %b, %f0 : tensor<4x8xi1>
// CHECK-NEXT:  %lt = pg_tensor.cmp lt %x, %y : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:  %w = pg_tensor.where %lt, %a, %e : tensor<4x8xi1>, tensor<4x8xf32>
// CHECK-NEXT:  %f = pg_tensor.cast %w : tensor<4x8xf32> to tensor<4x8xi32>
// CHECK-NEXT:  func.return %w, %f : tensor<4x8xf32>, tensor<4x8xi32>
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "elementwise"
// GENERIC-NEXT: ^bb0(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi32>, %b: tensor<4x8xi1>):
// GENERIC-NEXT: %c = "pg_tensor.const"() <{value = 1.500000e+00 : f32}> : () -> tensor<4x8xf32>
// GENERIC-NEXT: %inf = "pg_tensor.const"() <{value = 0xff800000 : f32}> : () -> tensor<4x8xf32>
// GENERIC-NEXT: %nan = "pg_tensor.const"() <{value = 0x7fc00000 : f32}> : () -> tensor<4x8xf32>
// GENERIC-NEXT: %big = "pg_tensor.const"() <{value = 1.000000e+30 : f64}> : () -> tensor<4x8xf64>
// GENERIC-NEXT: %mz = "pg_tensor.const"() <{value = -0.000000e+00 : f32}> : () -> tensor<4x8xf32>
// GENERIC-NEXT: %ci = "pg_tensor.const"() <{value = -7 : i32}> : () -> tensor<4x8xi32>
// GENERIC-NEXT: %f0 = "pg_tensor.const"() <{value = false}> : () -> tensor<4x8xi1>
// GENERIC-NEXT: %e = "pg_tensor.unary"(%x) <{kind = #pg<unary exp>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: %n = "pg_tensor.unary"(%i) <{kind = #pg<unary not>}> : (tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC-NEXT: %a = "pg_tensor.binary"(%x, %c) <{kind = #pg<binary add>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: %m = "pg_tensor.binary"(%i, %ci) <{kind = #pg<binary mod>}> : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC-NEXT: %o = "pg_tensor.binary"(%b, %f0) <{kind = #pg<binary or>}> : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// GENERIC-NEXT: %lt = "pg_tensor.cmp"(%x, %y) <{kind = #pg<cmp lt>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
// GENERIC-NEXT: %w = "pg_tensor.where"(%lt, %a, %e) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: %f = "pg_tensor.cast"(%w) : (tensor<4x8xf32>) -> tensor<4x8xi32>
// GENERIC-NEXT: "func.return"(%w, %f) : (tensor<4x8xf32>, tensor<4x8xi32>) -> ()
// GENERIC-NEXT: }) : () -> ()
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %i: tensor<4x8xi32>, %b: tensor<4x8xi1>) -> (tensor<4x8xf32>, tensor<4x8xi32>) {
  %c = pg_tensor.const 1.5 : tensor<4x8xf32>
  %inf = pg_tensor.const -inf : tensor<4x8xf32>
  %nan = pg_tensor.const nan : tensor<4x8xf32>
  %big = pg_tensor.const 1.0e30 : tensor<4x8xf64>
  %mz = pg_tensor.const -0.0 : tensor<4x8xf32>
  %ci = pg_tensor.const -7 : tensor<4x8xi32>
  %f0 = pg_tensor.const 0 : tensor<4x8xi1>
  %e = pg_tensor.unary exp %x : tensor<4x8xf32>
  %n = pg_tensor.unary not %i : tensor<4x8xi32>
  %a = pg_tensor.binary add %x, %c : tensor<4x8xf32>
  %m = pg_tensor.binary mod %i, %ci : tensor<4x8xi32>
  %o = pg_tensor.binary or %b, %f0 : tensor<4x8xi1>
  %lt = pg_tensor.cmp lt %x, %y : tensor<4x8xf32> -> tensor<4x8xi1>
  %w = pg_tensor.where %lt, %a, %e : tensor<4x8xi1>, tensor<4x8xf32>
  %f = pg_tensor.cast %w : tensor<4x8xf32> to tensor<4x8xi32>
  func.return %w, %f : tensor<4x8xf32>, tensor<4x8xi32>
}

// CHECK-LABEL: func.func @views(
// CHECK-NEXT:  %s = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  %all = pg_tensor.reduce sum %x {tag = "kept", axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<1x1xf32>
// CHECK-NEXT:  %r = pg_tensor.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NEXT:  %p = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:  %e = pg_tensor.expand %all : tensor<1x1xf32> -> tensor<8x8xf32>
// CHECK-NEXT:  %pd = pg_tensor.pad %x low [1, 0] high [0, 2] value -0.5 : tensor<4x8xf32> -> tensor<5x10xf32>
// CHECK-NEXT:  %sl = pg_tensor.slice %x {start = array<i64: 0, 1>, step = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
// CHECK-NEXT:  %fl = pg_tensor.flip %x {axes = array<i64: 0>} : tensor<4x8xf32>
// CHECK-NEXT:  func.return %s, %r, %p, %e, %pd, %sl, %fl : tensor<4x1xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<5x10xf32>, tensor<4x3xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }
// GENERIC-LABEL: sym_name = "views"
// GENERIC-NEXT: ^bb0(%x: tensor<4x8xf32>):
// GENERIC-NEXT: %s = "pg_tensor.reduce"(%x) <{kind = #pg<reduce max>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
// GENERIC-NEXT: %all = "pg_tensor.reduce"(%x) <{kind = #pg<reduce sum>, axes = array<i64: 0, 1>}> {tag = "kept"} : (tensor<4x8xf32>) -> tensor<1x1xf32>
// GENERIC-NEXT: %r = "pg_tensor.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
// GENERIC-NEXT: %p = "pg_tensor.permute"(%x) <{perm = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf32>
// GENERIC-NEXT: %e = "pg_tensor.expand"(%all) : (tensor<1x1xf32>) -> tensor<8x8xf32>
// GENERIC-NEXT: %pd = "pg_tensor.pad"(%x) <{low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = -5.000000e-01 : f32}> : (tensor<4x8xf32>) -> tensor<5x10xf32>
// GENERIC-NEXT: %sl = "pg_tensor.slice"(%x) <{start = array<i64: 0, 1>, step = array<i64: 1, 2>}> : (tensor<4x8xf32>) -> tensor<4x3xf32>
// GENERIC-NEXT: %fl = "pg_tensor.flip"(%x) <{axes = array<i64: 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: "func.return"(%s, %r, %p, %e, %pd, %sl, %fl) : (tensor<4x1xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<5x10xf32>, tensor<4x3xf32>, tensor<4x8xf32>) -> ()
// GENERIC-NEXT: }) : () -> ()
func.func @views(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<5x10xf32>, tensor<4x3xf32>, tensor<4x8xf32>) {
  %s = pg_tensor.reduce max %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %all = pg_tensor.reduce sum %x {axes = array<i64: 0, 1>, tag = "kept"} : tensor<4x8xf32> -> tensor<1x1xf32>
  %r = pg_tensor.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %p = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %e = pg_tensor.expand %all : tensor<1x1xf32> -> tensor<8x8xf32>
  %pd = pg_tensor.pad %x low [1, 0] high [0, 2] value -0.5 : tensor<4x8xf32> -> tensor<5x10xf32>
  %sl = pg_tensor.slice %x {start = array<i64: 0, 1>, step = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  %fl = pg_tensor.flip %x {axes = array<i64: 0>} : tensor<4x8xf32>
  func.return %s, %r, %p, %e, %pd, %sl, %fl : tensor<4x1xf32>, tensor<32xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<5x10xf32>, tensor<4x3xf32>, tensor<4x8xf32>
}

