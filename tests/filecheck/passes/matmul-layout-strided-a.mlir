// An A operand read along a strided reduce (a weight gradient's `dy.T @ x`: dy is (k, n), so
// A = dy.T steps through memory n elements per step of k) is read through a row-major copy
// where the product reads it `a-min-reuse` times (its columns) or more. Without the option
// (CHECK), A is read in place.
// RUN: opt-tool %s -p 'matmul-layout{a-min-reuse=64}' | filecheck %s --check-prefix=ROWA
// RUN: opt-tool %s -p 'matmul-layout{a-min-reuse=65}' | filecheck %s --check-prefix=FEW
// RUN: opt-tool %s -p matmul-layout | filecheck %s
// ROWA-LABEL: func.func @weight_gradient(
// ROWA:         %[[C:.*]] = pg_tensor.contiguous %{{.*}} : tensor<32x1x128xf32>
// ROWA-NEXT:    pg_tensor.expand %[[C]] : tensor<32x1x128xf32> -> tensor<32x64x128xf32>
// Read 64 times, fewer than a-min-reuse=65: in place.
// FEW-LABEL: func.func @weight_gradient(
// FEW-NOT:     pg_tensor.contiguous
// FEW:         func.return
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-NOT:     pg_tensor.contiguous
// CHECK:         func.return
func.func @weight_gradient(%dy: tensor<128x32xf32>, %x: tensor<128x64xf32>) -> tensor<32x64x1xf32> {
  %dt = pg_tensor.permute %dy {perm = array<i64: 1, 0>} : tensor<128x32xf32> -> tensor<32x128xf32>
  %ar = pg_tensor.reshape %dt : tensor<32x128xf32> -> tensor<32x1x128xf32>
  %ae = pg_tensor.expand %ar : tensor<32x1x128xf32> -> tensor<32x64x128xf32>
  %xt = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<128x64xf32> -> tensor<64x128xf32>
  %br = pg_tensor.reshape %xt : tensor<64x128xf32> -> tensor<1x64x128xf32>
  %be = pg_tensor.expand %br : tensor<1x64x128xf32> -> tensor<32x64x128xf32>
  %m = pg_tensor.binary mul %ae, %be : tensor<32x64x128xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<32x64x128xf32> -> tensor<32x64x1xf32>
  func.return %s : tensor<32x64x1xf32>
}

// A product read through a permute of its columns, `(x.T @ dy).T`: its kernel runs over B's
// columns outermost and takes A's rows as its vector lanes, which a row-major A would turn
// into a gather, so A stays where it is.
// ROWA-LABEL: func.func @read_transposed(
// ROWA-NOT:     pg_tensor.contiguous
// ROWA:         func.return
func.func @read_transposed(%dy: tensor<128x32xf32>, %x: tensor<128x64xf32>) -> tensor<64x32xf32> {
  %dt = pg_tensor.permute %dy {perm = array<i64: 1, 0>} : tensor<128x32xf32> -> tensor<32x128xf32>
  %ar = pg_tensor.reshape %dt : tensor<32x128xf32> -> tensor<32x1x128xf32>
  %ae = pg_tensor.expand %ar : tensor<32x1x128xf32> -> tensor<32x64x128xf32>
  %xt = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<128x64xf32> -> tensor<64x128xf32>
  %br = pg_tensor.reshape %xt : tensor<64x128xf32> -> tensor<1x64x128xf32>
  %be = pg_tensor.expand %br : tensor<1x64x128xf32> -> tensor<32x64x128xf32>
  %m = pg_tensor.binary mul %ae, %be : tensor<32x64x128xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<32x64x128xf32> -> tensor<32x64x1xf32>
  %r = pg_tensor.reshape %s : tensor<32x64x1xf32> -> tensor<32x64xf32>
  %t = pg_tensor.permute %r {perm = array<i64: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
  func.return %t : tensor<64x32xf32>
}

// A contiguous A (k innermost) needs no copy.
// ROWA-LABEL: func.func @contiguous_a(
// ROWA-NOT:     pg_tensor.contiguous
// ROWA:         func.return
func.func @contiguous_a(%a: tensor<32x128xf32>, %x: tensor<128x64xf32>) -> tensor<32x64x1xf32> {
  %ar = pg_tensor.reshape %a : tensor<32x128xf32> -> tensor<32x1x128xf32>
  %ae = pg_tensor.expand %ar : tensor<32x1x128xf32> -> tensor<32x64x128xf32>
  %xt = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<128x64xf32> -> tensor<64x128xf32>
  %br = pg_tensor.reshape %xt : tensor<64x128xf32> -> tensor<1x64x128xf32>
  %be = pg_tensor.expand %br : tensor<1x64x128xf32> -> tensor<32x64x128xf32>
  %m = pg_tensor.binary mul %ae, %be : tensor<32x64x128xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<32x64x128xf32> -> tensor<32x64x1xf32>
  func.return %s : tensor<32x64x1xf32>
}

// A plain B of any function (not a kept weight) whose reduce is LONG_PANEL_K (1536) long or
// longer and which is read min-reuse (32) times is laid out in column panels: its strided
// panels would leave the caches between row tiles. A shorter reduce keeps B in place.
// RUN: opt-tool %s -p 'matmul-layout{panel-cols=16}' | filecheck %s --check-prefix=LONG
// LONG-LABEL: func.func @long_reduce(
// LONG:         pg_tensor.reshape %{{.*}} : tensor<1x64x1536xf32> -> tensor<1x4x16x1536xf32>
// LONG-NEXT:    pg_tensor.permute
// LONG-NEXT:    pg_tensor.contiguous %{{.*}} : tensor<1x4x1536x16xf32>
// LONG-LABEL: func.func @short_reduce(
// LONG-NOT:     pg_tensor.contiguous
// LONG:         func.return
func.func @long_reduce(%a: tensor<32x1536xf32>, %b: tensor<1536x64xf32>) -> tensor<32x64x1xf32> {
  %ar = pg_tensor.reshape %a : tensor<32x1536xf32> -> tensor<32x1x1536xf32>
  %ae = pg_tensor.expand %ar : tensor<32x1x1536xf32> -> tensor<32x64x1536xf32>
  %bt = pg_tensor.permute %b {perm = array<i64: 1, 0>} : tensor<1536x64xf32> -> tensor<64x1536xf32>
  %br = pg_tensor.reshape %bt : tensor<64x1536xf32> -> tensor<1x64x1536xf32>
  %be = pg_tensor.expand %br : tensor<1x64x1536xf32> -> tensor<32x64x1536xf32>
  %m = pg_tensor.binary mul %ae, %be : tensor<32x64x1536xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<32x64x1536xf32> -> tensor<32x64x1xf32>
  func.return %s : tensor<32x64x1xf32>
}
func.func @short_reduce(%a: tensor<32x1024xf32>, %b: tensor<1024x64xf32>) -> tensor<32x64x1xf32> {
  %ar = pg_tensor.reshape %a : tensor<32x1024xf32> -> tensor<32x1x1024xf32>
  %ae = pg_tensor.expand %ar : tensor<32x1x1024xf32> -> tensor<32x64x1024xf32>
  %bt = pg_tensor.permute %b {perm = array<i64: 1, 0>} : tensor<1024x64xf32> -> tensor<64x1024xf32>
  %br = pg_tensor.reshape %bt : tensor<64x1024xf32> -> tensor<1x64x1024xf32>
  %be = pg_tensor.expand %br : tensor<1x64x1024xf32> -> tensor<32x64x1024xf32>
  %m = pg_tensor.binary mul %ae, %be : tensor<32x64x1024xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<32x64x1024xf32> -> tensor<32x64x1xf32>
  func.return %s : tensor<32x64x1xf32>
}

// Two products that read the same views of one value as A (an LSTM's dG.T @ x and
// dG.T @ h, each reshaping dG.T on its own) share one copy.
// ROWA-LABEL: func.func @shared_copy(
// ROWA:         %[[A:.*]] = pg_tensor.contiguous %ar : tensor<32x1x128xf32>
// ROWA-NEXT:    pg_tensor.expand %[[A]]
// ROWA-NOT:     pg_tensor.contiguous %ar2
// ROWA:         %ae2 = pg_tensor.expand %[[A]]
// ROWA:         func.return
func.func @shared_copy(%dy: tensor<128x32xf32>, %x: tensor<64x128xf32>, %h: tensor<64x128xf32>) -> (tensor<32x64x1xf32>, tensor<32x64x1xf32>) {
  %dt = pg_tensor.permute %dy {perm = array<i64: 1, 0>} : tensor<128x32xf32> -> tensor<32x128xf32>
  %ar = pg_tensor.reshape %dt : tensor<32x128xf32> -> tensor<32x1x128xf32>
  %ae = pg_tensor.expand %ar : tensor<32x1x128xf32> -> tensor<32x64x128xf32>
  %br = pg_tensor.reshape %x : tensor<64x128xf32> -> tensor<1x64x128xf32>
  %be = pg_tensor.expand %br : tensor<1x64x128xf32> -> tensor<32x64x128xf32>
  %m = pg_tensor.binary mul %ae, %be : tensor<32x64x128xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<32x64x128xf32> -> tensor<32x64x1xf32>
  %ar2 = pg_tensor.reshape %dt : tensor<32x128xf32> -> tensor<32x1x128xf32>
  %ae2 = pg_tensor.expand %ar2 : tensor<32x1x128xf32> -> tensor<32x64x128xf32>
  %hr = pg_tensor.reshape %h : tensor<64x128xf32> -> tensor<1x64x128xf32>
  %he = pg_tensor.expand %hr : tensor<1x64x128xf32> -> tensor<32x64x128xf32>
  %m2 = pg_tensor.binary mul %ae2, %he : tensor<32x64x128xf32>
  %s2 = pg_tensor.reduce sum %m2 {axes = array<i64: 2>} : tensor<32x64x128xf32> -> tensor<32x64x1xf32>
  func.return %s, %s2 : tensor<32x64x1xf32>, tensor<32x64x1xf32>
}
