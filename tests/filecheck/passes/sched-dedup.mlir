// sched-dedup: structurally identical pg_sched kernels become one; every launch of a
// duplicate runs the first kernel of its group, on the same buffers, in the same order.
// RUN: opt-tool %s -p convert-tensor-to-sched,sched-dedup | filecheck %s

// exp(a) and exp(b) are the same kernel; log(b) is not.
// CHECK:       pg_sched.kernel @k0(%a: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:         pg_tensor.unary exp
// CHECK-NOT:   pg_sched.kernel @k1
// CHECK:       pg_sched.kernel @k2(%b: !pg.buffer<4xf32>, %out: !pg.buffer<4xf32>) {
// CHECK:         pg_tensor.unary log
// CHECK:       func.func @main
// CHECK-NEXT:    %x = pg_sched.alloc
// CHECK-NEXT:    pg_sched.launch @k0(%a, %x)
// CHECK-NEXT:    %y = pg_sched.alloc
// CHECK-NEXT:    pg_sched.launch @k0(%b, %y)
// CHECK-NEXT:    %z = pg_sched.alloc
// CHECK-NEXT:    pg_sched.launch @k2(%b, %z)
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %x = pg_tensor.unary exp %a : tensor<4xf32>
  %y = pg_tensor.unary exp %b : tensor<4xf32>
  %z = pg_tensor.unary log %b : tensor<4xf32>
  func.return %x, %y, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

