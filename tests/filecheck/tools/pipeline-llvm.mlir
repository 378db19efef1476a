// The default CPU pipeline (CPU_LLVM) pass by pass, from pg_tensor down to LLVM IR text.
// The kernel keeps its symbol name through every stage, and @main's schedule is untouched
// from stage 2 on.
// RUN: opt-tool %s --emit=llvm --print-ir-after-all 2>&1 | filecheck %s
// --emit=<stage> stops at the end of that stage:
// RUN: opt-tool %s --emit=loop | filecheck %s --check-prefix=LOOP

// CHECK:      // -----// IR Dump After tensor-simplify //----- //
// CHECK:        func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
// CHECK:          pg_tensor.reduce sum
// CHECK:      // -----// IR Dump After convert-tensor-to-sched //----- //
// CHECK:        pg_sched.kernel @[[K:k[0-9]+]](
// CHECK:          pg_sched.load
// CHECK:          pg_tensor.reduce sum
// CHECK:          pg_sched.store
// CHECK:        func.func @main(%{{.*}}: !pg.buffer<32xf32>, %{{.*}}: !pg.buffer<8xf32>) -> !pg.buffer<4xf32> {
// CHECK-NEXT:     %[[OUT:.*]] = pg_sched.alloc : !pg.buffer<4xf32>
// CHECK-NEXT:     pg_sched.launch @[[K]](
// CHECK-NEXT:     func.return %[[OUT]] : !pg.buffer<4xf32>
// CHECK:      // -----// IR Dump After convert-sched-to-loop //----- //
// CHECK:        pg_loop.kernel @[[K]](
// CHECK:          pg_loop.range
// CHECK:          pg_loop.reduce sum
// CHECK:          pg_loop.store
// CHECK:      // -----// IR Dump After loop-simplify //----- //
// CHECK:        pg_loop.kernel @[[K]](
// CHECK:      // -----// IR Dump After convert-loop-to-uop //----- //
// CHECK:        pg_uop.kernel @[[K]](
// CHECK:          pg_uop.range
// CHECK:          pg_uop.acc
// CHECK:          pg_uop.end
// CHECK:      // -----// IR Dump After uop-simplify //----- //
// CHECK:        pg_uop.kernel @[[K]](
// CHECK:      // -----// IR Dump After cse //----- //
// CHECK:        pg_uop.kernel @[[K]](
// CHECK:      // -----// IR Dump After convert-uop-to-llvm //----- //
// CHECK-NOT:    pg_uop.
// CHECK:        llvm.func @[[K]](
// CHECK:        func.func @main(
// CHECK:          pg_sched.launch @[[K]](
// The LLVM IR on stdout, after the last dump.
// CHECK-NOT:  IR Dump After
// CHECK:      define void @{{"?}}[[K]]{{"?}}(ptr

// LOOP:       pg_loop.kernel @{{k[0-9]+}}(
// LOOP:         pg_loop.reduce sum
// LOOP:       func.func @main(
// LOOP-NOT:   pg_uop.kernel
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
  %bb = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
  %be = pg_tensor.expand %bb : tensor<1x8xf32> -> tensor<4x8xf32>
  %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
  %s = pg_tensor.reduce sum %m {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}
