// RUN: opt-tool %s -p matmul-layout | filecheck %s
// RUN: opt-tool %s -p 'matmul-layout{min-reuse=65}' | filecheck %s --check-prefix=FEW

// nn.Linear's x @ W.T: W (8, 16) is read with its columns 16 apart, 64 times each, so the
// matmul reads a transposed copy (k-major) instead, through a permute that gives it back
// its (8, 16) shape with the columns contiguous.
// CHECK-LABEL: func.func @linear(
// CHECK:         %[[WR:.*]] = pg_tensor.reshape %w : tensor<8x16xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT:    %[[T:.*]] = pg_tensor.permute %[[WR]] {perm = array<i64: 0, 2, 1>} : tensor<1x8x16xf32> -> tensor<1x16x8xf32>
// CHECK-NEXT:    %[[C:.*]] = pg_tensor.contiguous %[[T]] : tensor<1x16x8xf32>
// CHECK-NEXT:    %[[B:.*]] = pg_tensor.permute %[[C]] {perm = array<i64: 0, 2, 1>} : tensor<1x16x8xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT:    %we = pg_tensor.expand %[[B]] : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
// FEW-LABEL: func.func @linear(
// FEW-NOT:     pg_tensor.contiguous
// FEW:         func.return
func.func @linear(%x: tensor<64x16xf32>, %w: tensor<8x16xf32>) -> tensor<64x8x1xf32> {
  %xr = pg_tensor.reshape %x : tensor<64x16xf32> -> tensor<64x1x16xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x16xf32> -> tensor<64x8x16xf32>
  %wr = pg_tensor.reshape %w : tensor<8x16xf32> -> tensor<1x8x16xf32>
  %we = pg_tensor.expand %wr : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x8x16xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x8x16xf32> -> tensor<64x8x1xf32>
  func.return %s : tensor<64x8x1xf32>
}


// x @ W with W stored (k, m): the frontend's permute already gives B contiguous columns.
// CHECK-LABEL: func.func @plain(
// CHECK-NOT:     pg_tensor.contiguous
// CHECK:         func.return
// A computed B (w * 2, read transposed) is copied too: the copy computes it.
// CHECK-LABEL: func.func @computed(
// CHECK:         %[[W2:.*]] = pg_tensor.binary mul %w, %two : tensor<8x16xf32>
// CHECK:         %[[R:.*]] = pg_tensor.reshape %[[W2]] : tensor<8x16xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT:    %[[T:.*]] = pg_tensor.permute %[[R]]
// CHECK-NEXT:    pg_tensor.contiguous %[[T]] : tensor<1x16x8xf32>
func.func @plain(%x: tensor<64x16xf32>, %w: tensor<16x8xf32>) -> tensor<64x8x1xf32> {
  %wt = pg_tensor.permute %w {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %xr = pg_tensor.reshape %x : tensor<64x16xf32> -> tensor<64x1x16xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x16xf32> -> tensor<64x8x16xf32>
  %wr = pg_tensor.reshape %wt : tensor<8x16xf32> -> tensor<1x8x16xf32>
  %we = pg_tensor.expand %wr : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x8x16xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x8x16xf32> -> tensor<64x8x1xf32>
  func.return %s : tensor<64x8x1xf32>
}
func.func @computed(%x: tensor<64x16xf32>, %w: tensor<8x16xf32>) -> tensor<64x8x1xf32> {
  %two = pg_tensor.const 2.0 : tensor<8x16xf32>
  %w2 = pg_tensor.binary mul %w, %two : tensor<8x16xf32>
  %xr = pg_tensor.reshape %x : tensor<64x16xf32> -> tensor<64x1x16xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x16xf32> -> tensor<64x8x16xf32>
  %wr = pg_tensor.reshape %w2 : tensor<8x16xf32> -> tensor<1x8x16xf32>
  %we = pg_tensor.expand %wr : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x8x16xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x8x16xf32> -> tensor<64x8x1xf32>
  func.return %s : tensor<64x8x1xf32>
}


// Attention's q @ k.transpose(-1, -2) per head: the keys (2, 32, 4) are read with k
// contiguous; each head's keys are copied transposed.
// CHECK-LABEL: func.func @scores(
// CHECK:         pg_tensor.permute %{{.*}} {perm = array<i64: 0, 1, 3, 2>} : tensor<2x1x32x4xf32> -> tensor<2x1x4x32xf32>
// CHECK-NEXT:    pg_tensor.contiguous %{{.*}} : tensor<2x1x4x32xf32>
// A sum over the last axis that is not a product of two broadcasts is no matmul.
// CHECK-LABEL: func.func @row_sum(
// CHECK-NOT:     pg_tensor.contiguous
// CHECK:         func.return
func.func @scores(%q: tensor<2x32x4xf32>, %k: tensor<2x32x4xf32>) -> tensor<2x32x32x1xf32> {
  %qr = pg_tensor.reshape %q : tensor<2x32x4xf32> -> tensor<2x32x1x4xf32>
  %qe = pg_tensor.expand %qr : tensor<2x32x1x4xf32> -> tensor<2x32x32x4xf32>
  %kr = pg_tensor.reshape %k : tensor<2x32x4xf32> -> tensor<2x1x32x4xf32>
  %ke = pg_tensor.expand %kr : tensor<2x1x32x4xf32> -> tensor<2x32x32x4xf32>
  %m = pg_tensor.binary mul %qe, %ke : tensor<2x32x32x4xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 3>} : tensor<2x32x32x4xf32> -> tensor<2x32x32x1xf32>
  func.return %s : tensor<2x32x32x1xf32>
}
func.func @row_sum(%x: tensor<64x8x16xf32>) -> tensor<64x8x1xf32> {
  %e = pg_tensor.unary exp %x : tensor<64x8x16xf32>
  %s = pg_tensor.reduce sum %e {axes = array<i64: 2>} : tensor<64x8x16xf32> -> tensor<64x8x1xf32>
  func.return %s : tensor<64x8x1xf32>
}


// Rows of B a multiple of alias-bytes apart (16 f32 = 64 bytes) alias in the caches: B is
// read through a copy whose rows are one line (line-bytes, 4 f32 here) longer, sliced back
// to B's shape. Without alias-bytes (the default, as on GPUs) B is read in place.
// RUN: opt-tool %s -p 'matmul-layout{alias-bytes=64 line-bytes=16}' | filecheck %s --check-prefix=ALIAS
// ALIAS-LABEL: func.func @aliased_rows(
// ALIAS:         %[[T:.*]] = pg_tensor.permute %{{.*}} {perm = array<i64: 0, 2, 1>} : tensor<1x16x16xf32> -> tensor<1x16x16xf32>
// ALIAS-NEXT:    %[[P:.*]] = pg_tensor.pad %[[T]] low [0, 0, 0] high [0, 0, 4] value 0.0 : tensor<1x16x16xf32> -> tensor<1x16x20xf32>
// ALIAS-NEXT:    %[[C:.*]] = pg_tensor.contiguous %[[P]] : tensor<1x16x20xf32>
// ALIAS-NEXT:    %[[S:.*]] = pg_tensor.slice %[[C]] {start = array<i64: 0, 0, 0>, step = array<i64: 1, 1, 1>} : tensor<1x16x20xf32> -> tensor<1x16x16xf32>
// ALIAS-NEXT:    %[[B:.*]] = pg_tensor.permute %[[S]] {perm = array<i64: 0, 2, 1>} : tensor<1x16x16xf32> -> tensor<1x16x16xf32>
// ALIAS-NEXT:    pg_tensor.expand %[[B]] : tensor<1x16x16xf32> -> tensor<64x16x16xf32>
// The transposed copy of x @ W.T, whose rows would alias, is padded the same way.
// ALIAS-LABEL: func.func @aliased_transposed(
// ALIAS:         pg_tensor.pad %{{.*}} low [0, 0, 0] high [0, 0, 4] value 0.0 : tensor<1x16x16xf32> -> tensor<1x16x20xf32>
// ALIAS-NEXT:    pg_tensor.contiguous
// ALIAS-NEXT:    pg_tensor.slice
// Fewer rows than ALIAS_ROWS (16) fit the sets they share: no copy.
// ALIAS-LABEL: func.func @few_rows(
// ALIAS-NOT:     pg_tensor.contiguous
// ALIAS:         func.return
// CHECK-LABEL: func.func @aliased_rows(
// CHECK-NOT:     pg_tensor.contiguous
// CHECK:         func.return
func.func @aliased_rows(%x: tensor<64x16xf32>, %w: tensor<16x16xf32>) -> tensor<64x16x1xf32> {
  %wt = pg_tensor.permute %w {perm = array<i64: 1, 0>} : tensor<16x16xf32> -> tensor<16x16xf32>
  %xr = pg_tensor.reshape %x : tensor<64x16xf32> -> tensor<64x1x16xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x16xf32> -> tensor<64x16x16xf32>
  %wr = pg_tensor.reshape %wt : tensor<16x16xf32> -> tensor<1x16x16xf32>
  %we = pg_tensor.expand %wr : tensor<1x16x16xf32> -> tensor<64x16x16xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x16x16xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x16x16xf32> -> tensor<64x16x1xf32>
  func.return %s : tensor<64x16x1xf32>
}
func.func @aliased_transposed(%x: tensor<64x16xf32>, %w: tensor<16x16xf32>) -> tensor<64x16x1xf32> {
  %xr = pg_tensor.reshape %x : tensor<64x16xf32> -> tensor<64x1x16xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x16xf32> -> tensor<64x16x16xf32>
  %wr = pg_tensor.reshape %w : tensor<16x16xf32> -> tensor<1x16x16xf32>
  %we = pg_tensor.expand %wr : tensor<1x16x16xf32> -> tensor<64x16x16xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x16x16xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x16x16xf32> -> tensor<64x16x1xf32>
  func.return %s : tensor<64x16x1xf32>
}
func.func @few_rows(%x: tensor<64x8xf32>, %w: tensor<8x16xf32>) -> tensor<64x16x1xf32> {
  %wt = pg_tensor.permute %w {perm = array<i64: 1, 0>} : tensor<8x16xf32> -> tensor<16x8xf32>
  %xr = pg_tensor.reshape %x : tensor<64x8xf32> -> tensor<64x1x8xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x8xf32> -> tensor<64x16x8xf32>
  %wr = pg_tensor.reshape %wt : tensor<16x8xf32> -> tensor<1x16x8xf32>
  %we = pg_tensor.expand %wr : tensor<1x16x8xf32> -> tensor<64x16x8xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x16x8xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x16x8xf32> -> tensor<64x16x1xf32>
  func.return %s : tensor<64x16x1xf32>
}


// A training step's forward x @ W.T and backward dy @ W read W through one expand: only the
// forward reads the copy (through an expand of its own); the backward's reduce over the
// rows of W keeps reading W, whose columns are contiguous there (through the copy they
// would be 8 apart: a gather). A second forward matmul of the same W shares the copy.
// CHECK-LABEL: func.func @forward_and_backward(
// CHECK:         %wr = pg_tensor.reshape %w : tensor<8x16xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT:    %[[T:.*]] = pg_tensor.permute %wr {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:    %[[C:.*]] = pg_tensor.contiguous %[[T]] : tensor<1x16x8xf32>
// CHECK-NEXT:    %[[B:.*]] = pg_tensor.permute %[[C]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:    %we = pg_tensor.expand %wr : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
// CHECK-NEXT:    %[[WE1:.*]] = pg_tensor.expand %[[B]] : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
// CHECK-NEXT:    %m = pg_tensor.binary mul %xe, %[[WE1]]
// CHECK:         %[[WE2:.*]] = pg_tensor.expand %[[B]] : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
// CHECK-NEXT:    %m2 = pg_tensor.binary mul %xe, %[[WE2]]
// CHECK:         %gm = pg_tensor.binary mul %ge, %we
// CHECK-NOT:     pg_tensor.contiguous
// CHECK:         func.return
func.func @forward_and_backward(%x: tensor<64x16xf32>, %w: tensor<8x16xf32>, %g: tensor<64x8xf32>) -> (tensor<64x8x1xf32>, tensor<64x8x1xf32>, tensor<64x1x16xf32>) {
  %xr = pg_tensor.reshape %x : tensor<64x16xf32> -> tensor<64x1x16xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x16xf32> -> tensor<64x8x16xf32>
  %wr = pg_tensor.reshape %w : tensor<8x16xf32> -> tensor<1x8x16xf32>
  %we = pg_tensor.expand %wr : tensor<1x8x16xf32> -> tensor<64x8x16xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x8x16xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x8x16xf32> -> tensor<64x8x1xf32>
  %m2 = pg_tensor.binary mul %xe, %we : tensor<64x8x16xf32>
  %s2 = pg_tensor.reduce sum %m2 {axes = array<i64: 2>} : tensor<64x8x16xf32> -> tensor<64x8x1xf32>
  %gr = pg_tensor.reshape %g : tensor<64x8xf32> -> tensor<64x8x1xf32>
  %ge = pg_tensor.expand %gr : tensor<64x8x1xf32> -> tensor<64x8x16xf32>
  %gm = pg_tensor.binary mul %ge, %we : tensor<64x8x16xf32>
  %gs = pg_tensor.reduce sum %gm {axes = array<i64: 1>} : tensor<64x8x16xf32> -> tensor<64x1x16xf32>
  func.return %s, %s2, %gs : tensor<64x8x1xf32>, tensor<64x8x1xf32>, tensor<64x1x16xf32>
}


// Column panels (panel-cols, 16 here): a plain weight of @main, read 8 times, is copied into
// contiguous (k x 16) panels, k-major within each, and read back through views with B's
// shape; the matmul kernel then streams each panel linearly. Without panel-cols it is read
// in place (CHECK).
// RUN: opt-tool %s -p 'matmul-layout{panel-cols=16}' | filecheck %s --check-prefix=PANEL
// PANEL-LABEL: func.func @main(
// PANEL:         %[[WR:.*]] = pg_tensor.reshape %wt : tensor<64x64xf32> -> tensor<1x64x64xf32>
// PANEL-NEXT:    %[[R:.*]] = pg_tensor.reshape %[[WR]] : tensor<1x64x64xf32> -> tensor<1x4x16x64xf32>
// PANEL-NEXT:    %[[T:.*]] = pg_tensor.permute %[[R]] {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x16x64xf32> -> tensor<1x4x64x16xf32>
// PANEL-NEXT:    %[[C:.*]] = pg_tensor.contiguous %[[T]] : tensor<1x4x64x16xf32>
// PANEL-NEXT:    %[[U:.*]] = pg_tensor.permute %[[C]] {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x64x16xf32> -> tensor<1x4x16x64xf32>
// PANEL-NEXT:    %[[B:.*]] = pg_tensor.reshape %[[U]] : tensor<1x4x16x64xf32> -> tensor<1x64x64xf32>
// PANEL-NEXT:    pg_tensor.expand %[[B]] : tensor<1x64x64xf32> -> tensor<8x64x64xf32>
// A transposed weight read 64 times (in any function) gets the panels instead of the
// transposed copy.
// PANEL-LABEL: func.func @panel_transposed(
// PANEL:         pg_tensor.reshape %{{.*}} : tensor<1x64x64xf32> -> tensor<1x4x16x64xf32>
// PANEL-NEXT:    pg_tensor.permute
// PANEL-NEXT:    pg_tensor.contiguous %{{.*}} : tensor<1x4x64x16xf32>
// The same plain weight outside @main: no kept copy, so read in place.
// PANEL-LABEL: func.func @plain_outside_main(
// PANEL-NOT:     pg_tensor.contiguous
// PANEL:         func.return
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     pg_tensor.contiguous
// CHECK:         func.return
func.func @main(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64x1xf32> {
  %wt = pg_tensor.permute %w {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %xr = pg_tensor.reshape %x : tensor<8x64xf32> -> tensor<8x1x64xf32>
  %xe = pg_tensor.expand %xr : tensor<8x1x64xf32> -> tensor<8x64x64xf32>
  %wr = pg_tensor.reshape %wt : tensor<64x64xf32> -> tensor<1x64x64xf32>
  %we = pg_tensor.expand %wr : tensor<1x64x64xf32> -> tensor<8x64x64xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<8x64x64xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<8x64x64xf32> -> tensor<8x64x1xf32>
  func.return %s : tensor<8x64x1xf32>
}
func.func @panel_transposed(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64x1xf32> {
  %xr = pg_tensor.reshape %x : tensor<64x64xf32> -> tensor<64x1x64xf32>
  %xe = pg_tensor.expand %xr : tensor<64x1x64xf32> -> tensor<64x64x64xf32>
  %wr = pg_tensor.reshape %w : tensor<64x64xf32> -> tensor<1x64x64xf32>
  %we = pg_tensor.expand %wr : tensor<1x64x64xf32> -> tensor<64x64x64xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<64x64x64xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<64x64x64xf32> -> tensor<64x64x1xf32>
  func.return %s : tensor<64x64x1xf32>
}
func.func @plain_outside_main(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64x1xf32> {
  %wt = pg_tensor.permute %w {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %xr = pg_tensor.reshape %x : tensor<8x64xf32> -> tensor<8x1x64xf32>
  %xe = pg_tensor.expand %xr : tensor<8x1x64xf32> -> tensor<8x64x64xf32>
  %wr = pg_tensor.reshape %wt : tensor<64x64xf32> -> tensor<1x64x64xf32>
  %we = pg_tensor.expand %wr : tensor<1x64x64xf32> -> tensor<8x64x64xf32>
  %m = pg_tensor.binary mul %xe, %we : tensor<8x64x64xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 2>} : tensor<8x64x64xf32> -> tensor<8x64x1xf32>
  func.return %s : tensor<8x64x1xf32>
}
