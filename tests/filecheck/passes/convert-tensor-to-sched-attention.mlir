// convert-tensor-to-sched: an attention is a kernel of its own that also takes a scratch
// buffer for its score rows, just before its output: (work items) x (a tile of 4 queries) x
// S. Here 16 rows in tiles of 4, at most 8 rows in flight: 2 work items, 2 x 4 x 6 = 48
// scores. A computed q (read once per key) is stored by its own kernel first; the constant
// bias is recreated inside the kernel.
// RUN: opt-tool %s -p 'convert-tensor-to-sched{attention-rows=8}' | filecheck %s
// RUN: opt-tool %s -p 'convert-tensor-to-sched' | filecheck %s --check-prefix=WIDE

// CHECK:       pg_sched.kernel @k0(%q: !pg.buffer<64xf32>, %out: !pg.buffer<64xf32>) {
// CHECK:         pg_tensor.binary mul
// CHECK:       pg_sched.kernel @k1(%q2: !pg.buffer<64xf32>, %k: !pg.buffer<48xf32>, %v: !pg.buffer<192xf32>, %scratch: !pg.buffer<48xf32>, %out: !pg.buffer<256xf32>) {
// CHECK:         %z = pg_tensor.const 0.0 : tensor<2x8x6xf32>
// CHECK-NEXT:    %r = pg_tensor.attention %q2_1, %k_1, %v_1, %z scale 0.5
// CHECK-NEXT:    pg_sched.store %r, %out
// CHECK:       func.func @main(
// CHECK:         %r = pg_sched.alloc : !pg.buffer<256xf32>
// CHECK-NEXT:    %scratch = pg_sched.alloc : !pg.buffer<48xf32>
// CHECK-NEXT:    pg_sched.launch @k1(%q2, %k, %v, %scratch, %r)
// With the default 256 rows in flight, all 16 rows: 4 work items of 4 rows of 6 scores.
// WIDE:        %scratch = pg_sched.alloc : !pg.buffer<96xf32>
builtin.module {
  func.func @main(%q: tensor<2x8x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x16xf32>) -> tensor<2x8x16xf32> {
    %z = pg_tensor.const 0.0 : tensor<2x8x6xf32>
    %q2 = pg_tensor.binary mul %q, %q : tensor<2x8x4xf32>
    %r = pg_tensor.attention %q2, %k, %v, %z scale 0.5 : tensor<2x8x4xf32>, tensor<2x6x4xf32>, tensor<2x6x16xf32>, tensor<2x8x6xf32> -> tensor<2x8x16xf32>
    func.return %r : tensor<2x8x16xf32>
  }
}
