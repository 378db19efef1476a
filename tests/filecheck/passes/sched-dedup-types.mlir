// sched-dedup: kernels with the same ops, properties and argument types whose loads read the
// buffer as 3x4 and as 4x3 stay two kernels (xDSL's structural equivalence does not compare
// result types; merging them gave einsum's transposes wrong answers).
// RUN: opt-tool %s -p sched-dedup | filecheck %s

// CHECK:       pg_sched.kernel @k0(%a: !pg.buffer<12xf32>, %out: !pg.buffer<12xf32>) {
// CHECK-NEXT:    pg_sched.load %a : !pg.buffer<12xf32> -> tensor<3x4xf32>
// CHECK:       pg_sched.kernel @k1(%a: !pg.buffer<12xf32>, %out: !pg.buffer<12xf32>) {
// CHECK-NEXT:    pg_sched.load %a : !pg.buffer<12xf32> -> tensor<4x3xf32>
// CHECK:         pg_sched.launch @k0(%a, %x)
// CHECK:         pg_sched.launch @k1(%a, %y)
pg_sched.kernel @k0(%a: !pg.buffer<12xf32>, %out: !pg.buffer<12xf32>) {
  %t = pg_sched.load %a : !pg.buffer<12xf32> -> tensor<3x4xf32>
  %p = pg_tensor.permute %t {perm = array<i64: 1, 0>} : tensor<3x4xf32> -> tensor<4x3xf32>
  pg_sched.store %p, %out : tensor<4x3xf32>, !pg.buffer<12xf32>
}
pg_sched.kernel @k1(%a: !pg.buffer<12xf32>, %out: !pg.buffer<12xf32>) {
  %t = pg_sched.load %a : !pg.buffer<12xf32> -> tensor<4x3xf32>
  %p = pg_tensor.permute %t {perm = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
  pg_sched.store %p, %out : tensor<3x4xf32>, !pg.buffer<12xf32>
}
func.func @main(%a: !pg.buffer<12xf32>) -> (!pg.buffer<12xf32>, !pg.buffer<12xf32>) {
  %x = pg_sched.alloc : !pg.buffer<12xf32>
  pg_sched.launch @k0(%a, %x) : !pg.buffer<12xf32>, !pg.buffer<12xf32>
  %y = pg_sched.alloc : !pg.buffer<12xf32>
  pg_sched.launch @k1(%a, %y) : !pg.buffer<12xf32>, !pg.buffer<12xf32>
  func.return %x, %y : !pg.buffer<12xf32>, !pg.buffer<12xf32>
}
